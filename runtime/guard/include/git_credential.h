/* git's credential-helper protocol, for the broker that answers the
 * sandbox's git from outside it: a bounded reader of a request, a writer
 * of an answer, the broker's decision (a pure function of the request and
 * the hosts a policy lists) and the call of the host's own
 * `git credential fill` that finds the token.
 *
 * The request comes from inside the sandbox, so everything in it is
 * hostile: the reader refuses what is ambiguous (a key given twice, `url`
 * next to the parts it expands into) rather than picking one reading. */
#ifndef HAVEN_GIT_CREDENTIAL_H
#define HAVEN_GIT_CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Bounds of one request: its bytes (blank line included) and the
 * entries of each list key (capability[], wwwauth[]). */
#define HV_GIT_CREDENTIAL_MAX_BYTES 8192
#define HV_GIT_CREDENTIAL_MAX_LIST 16

typedef struct hv_git_credential
{
  char *protocol;
  char *host; /* as git sends it: the name, then ":port" when one was given */
  char *path; /* without the leading '/'; NULL when not sent */
  char *username;
  char *password;
  char *capability[HV_GIT_CREDENTIAL_MAX_LIST];
  size_t n_capability;
  char *wwwauth[HV_GIT_CREDENTIAL_MAX_LIST];
  size_t n_wwwauth;
} hv_git_credential;

/* Free every field (the password's bytes are wiped first) and zero *c. */
void hv_git_credential_clear (hv_git_credential *c);

/* Read the key=value lines of buf[0..len) up to a blank line or the end
 * into *out (which must be zeroed).  `url` is expanded into protocol,
 * host (with its port), username, password and path as git does.  Keys git
 * does not know are skipped, as git skips them.  Refused, with *out
 * cleared: more than HV_GIT_CREDENTIAL_MAX_BYTES, a NUL, a line without
 * '=', an empty key, a key given twice (a list key more than
 * HV_GIT_CREDENTIAL_MAX_LIST times), bytes after the blank line, a
 * protocol that is not a URL scheme, a host with a path, userinfo, space
 * or control character or a bad port, and a path with an empty, "." or
 * ".." segment. */
int hv_git_credential_parse (const char *buf, size_t len, hv_git_credential *out, hv_error **err);

/* A path as git sends it: '/'-separated segments without a leading or
 * trailing '/', none empty, "." or ".." (they would let
 * "allowed/../other" pass a prefix check), no control character. */
bool hv_git_credential_path_valid (const char *p);

/* What git's own cache client (`git credential-cache --socket PATH ACTION`,
 * the helper the sandbox's git runs) sends before the credential: a line
 * "action=ACTION", then "timeout=SECONDS", in that order (as git's own
 * daemon reads them).  Its whole
 * message is bounded by this: the header, then one request. */
#define HV_GIT_CREDENTIAL_CACHE_MAX_BYTES (HV_GIT_CREDENTIAL_MAX_BYTES + 64)

/* Read one cache-client message, buf[0..len) (everything the client sent
 * before it shut down its side): *action (a new string of letters only,
 * e.g. "get", "store", "erase", "exit") and the request after the header
 * into *out (zeroed), as hv_git_credential_parse reads it.  Refused, with
 * *out cleared and *action NULL: more than
 * HV_GIT_CREDENTIAL_CACHE_MAX_BYTES, a first line that is not
 * "action=" and letters, a timeout that is not digits, and whatever
 * hv_git_credential_parse refuses in the rest. */
int hv_git_credential_parse_cache (const char *buf, size_t len, char **action, hv_git_credential *out,
                                   hv_error **err);

/* The answer to a request: "username=U\npassword=P\n\n".  Refused when
 * either holds a newline (it would add a key to the answer). */
int hv_git_credential_answer (const char *username, const char *password, char **out, hv_error **err);

/* One host a policy lets the broker answer for. */
typedef struct hv_git_credential_host
{
  const char *host;        /* the name, compared without case */
  unsigned port;           /* 0: https's own, 443 */
  const char *path_prefix; /* NULL: any repository; else whole '/'-separated
                            * segments the request's path must start with
                            * (git sends a path only with credential.useHttpPath) */
} hv_git_credential_host;

/* Whether to answer `action` (the helper's argument: get, store, erase)
 * for `req`: the index of the host entry that allows it, or -1 with *why
 * set to a static reason.  Only `get` is answered (the sandbox may not
 * write or erase the user's stored credentials), only for https and a
 * listed host and port, and, where the entry has a prefix, a path under it. */
int hv_git_credential_decide (const char *action, const hv_git_credential *req,
                              const hv_git_credential_host *hosts, size_t n_hosts, const char **why);

/* Ask the host's git (`git`, NULL for "git" on PATH) for the credential
 * of req's protocol, host and path with `git credential fill`, in a
 * minimal environment that cannot prompt, from "/" so no repository's
 * config is read, waiting at most timeout_ms.  *username and *password are
 * set on success; the password never appears in an error. */
int hv_git_credential_fill (const char *git, const hv_git_credential *req, int timeout_ms, char **username,
                            char **password, hv_error **err);
#endif
