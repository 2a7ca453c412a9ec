/* The model API gateway in the per-container monitor (the design is
 * docs/gateway.md): one listener per provider the run.haven.gateway
 * annotation names, made by create on 127.0.0.1:PORT inside the
 * sandbox's network namespace and held only by the monitor, each served
 * by a service (monitor_service.h) whose connections are one exchange
 * each (hv_gw_forward, over TLS to the provider's real host with the real
 * key).
 *
 * Bounds, per provider: HV_MONITOR_GATEWAY_CONNS connections at once (one
 * more is closed at once); a token bucket of HV_MONITOR_GATEWAY_RATE
 * requests a second, HV_MONITOR_GATEWAY_BURST at once (over it: 429, the
 * provider never contacted); a request body of at most
 * HV_MONITOR_GATEWAY_BODY_MAX bytes; the request within
 * HV_MONITOR_GATEWAY_REQUEST_MS, each upstream step and each wait for a
 * response byte within HV_MONITOR_GATEWAY_IO_MS (a model may think for
 * minutes before its first byte), the whole response within
 * HV_MONITOR_GATEWAY_RESPONSE_MS.
 *
 * Trail: one record per exchange, {"event":"api","provider","method",
 * "path","status","request_bytes","response_bytes","duration_ms"}, with
 * "reason" when it was refused or failed; those go through a denial
 * limiter (denial_limiter.h: a new reason, path or method is recorded at
 * once, repeats are summarised as "denials-suppressed" of kind "api"), so
 * a flood cannot fill the disk.  Never a header value, a body or the key.
 *
 * Trust for the provider's certificate is haven's own: the system store
 * or SSL_CERT_FILE / SSL_CERT_DIR as the monitor inherited them from the
 * runtime, read once when the gateway is made (before the monitor reports
 * ready: a trust store that cannot be read fails create).
 *
 * Fail closed: a listener not served is closed (connects refused); when
 * the monitor dies, the kernel closes the listeners. */
#ifndef HAVEN_MONITOR_GATEWAY_H
#define HAVEN_MONITOR_GATEWAY_H

#include <stdbool.h>

#include "audit_trail.h"
#include "error.h"
#include "gateway_config.h"

#define HV_MONITOR_GATEWAY_CONNS 16
#define HV_MONITOR_GATEWAY_RATE 10
#define HV_MONITOR_GATEWAY_BURST 60
#define HV_MONITOR_GATEWAY_BODY_MAX (32u << 20)
#define HV_MONITOR_GATEWAY_REQUEST_MS (60 * 1000)
#define HV_MONITOR_GATEWAY_IO_MS (10 * 60 * 1000)
#define HV_MONITOR_GATEWAY_RESPONSE_MS (60 * 60 * 1000)

typedef struct hv_monitor_gateway hv_monitor_gateway;

/* The gateway of cfg, keys[i] the secret of cfg->apis[i] (both must
 * outlive it), and its TLS context; no listener yet. */
hv_monitor_gateway *hv_monitor_gateway_new (const hv_gw_config *cfg, const char *const *keys, hv_error **err);
/* The listener of provider NAME from create, taken: false (the fd still
 * the caller's) when no such api is configured or it came twice. */
bool hv_monitor_gateway_take_fd (hv_monitor_gateway *g, const char *name, int fd);
/* The container runs: serve every listener (records into trail).  A
 * listener that did not come, or cannot be served, fails it (the served
 * ones are stopped). */
int hv_monitor_gateway_start (hv_monitor_gateway *g, struct hv_audit_trail *trail, hv_error **err);
/* The end: the limiter's last summary.  Connections still being served
 * are cut when the monitor exits. */
void hv_monitor_gateway_finish (hv_monitor_gateway *g);
/* Stop serving and wait for the connections, then free.  NULL is fine. */
void hv_monitor_gateway_free (hv_monitor_gateway *g);
#endif
