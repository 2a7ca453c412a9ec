/* DNS messages (RFC 1035 wire format): parse, build, encode.
 *
 * The codec under haven's egress resolver.  Every byte it parses comes from
 * the sandbox (queries) or from an upstream the sandbox may influence
 * (responses), so parsing is strict and bounded:
 *
 * Handles
 *  - the header (id, flags, opcode, rcode, counts), questions, and the
 *    answer, authority and additional sections;
 *  - name compression, followed safely: each pointer must point before the
 *    start of the label run that led to it (so hops strictly go backwards and
 *    cannot loop), at most HV_DNS_MAX_HOPS hops, labels <= 63 bytes, whole
 *    names <= 255 bytes, nothing read past the buffer;
 *  - A, AAAA and CNAME records decoded; every other type kept as opaque
 *    rdata with its type, class and TTL.  The names inside the rdata of the
 *    RFC 1035 types that may be compressed (NS, CNAME, SOA, PTR, MX, MD, MF,
 *    MB, MG, MR, MINFO) are stored decompressed, so the rdata stays valid
 *    wherever it is re-encoded;
 *  - OPT (EDNS0, RFC 6891): UDP size, extended rcode, version, DO bit and
 *    options, with Extended DNS Errors (RFC 8914, option 15: info code and
 *    UTF-8 text) decoded;
 *  - building a query, a reply to a query (any rcode: REFUSED, SERVFAIL,
 *    NOERROR with no answers) with an optional EDE, TTL capping, and
 *    encoding any message within a size limit (TC set when the answer does
 *    not fit).  Question names, owner names and CNAME targets are
 *    compressed; names inside other rdata are written whole;
 *  - following the CNAME chain of a response from the queried name.
 *
 * Refuses (an error naming the record and the offset)
 *  - a message shorter than its counts say, or with bytes after the last
 *    record its counts announce (counts that lie either way);
 *  - more than HV_DNS_MAX_RECORDS questions and records together (a bound
 *    on what a hostile 64 KiB message can make us allocate);
 *  - compression pointers that point forward, at themselves, or into a
 *    loop; the obsolete extended label types (0x40, 0x80);
 *  - A rdata not 4 bytes, AAAA not 16, rdata of the name-bearing types
 *    that is not exactly their names and fields;
 *  - OPT outside the additional section, with an owner other than the root,
 *    or more than once; malformed options; an EDE shorter than its info
 *    code or whose text is not UTF-8 or contains NUL.
 *
 * TTLs with the top bit set are read as 0 (RFC 2181 8).  Names are kept in
 * uncompressed wire form; hv_dns_name_to_text escapes every byte that is
 * not printable ASCII, a dot or a backslash inside a label as \DDD, so a
 * name shown in an audit record cannot carry control characters. */
#ifndef HAVEN_DNS_MESSAGE_H
#define HAVEN_DNS_MESSAGE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define HV_DNS_PORT 53           /* where queries go unless an address says otherwise (RFC 1035 4.2) */
#define HV_DNS_HEADER_LEN 12     /* the fixed header: ID, flags, four counts (RFC 1035 4.1.1) */
/* The largest message: TCP's two-byte length frames no more (RFC 1035
 * 4.2.2), and no UDP datagram carries more. */
#define HV_DNS_MESSAGE_MAX 65535
#define HV_DNS_NAME_MAX 255      /* wire bytes, root label included */
/* A name's text with no escape and no trailing dot: the 255 wire bytes
 * less the first label's length byte and the root label. */
#define HV_DNS_PLAIN_NAME_MAX 253
#define HV_DNS_LABEL_MAX 63
#define HV_DNS_NAME_TEXT_MAX 1024 /* to_text output: every byte \DDD, dots, NUL */
#define HV_DNS_MAX_HOPS 64       /* compression pointers followed per name */
#define HV_DNS_MAX_RECORDS 1024  /* questions + records of one message */
#define HV_DNS_MAX_CHAIN 16      /* names on a CNAME chain */
#define HV_DNS_UDP_MIN 512       /* UDP size without EDNS (RFC 1035 4.2.1) */
#define HV_DNS_EDE_TEXT_MAX 200  /* so a reply with one EDE fits 512 bytes */
/* EDNS options hv_dns_add_ede adds to one message: far more than any
 * reply needs (haven adds one), so that a loop cannot grow it unbounded. */
#define HV_DNS_MAX_OPTIONS 64

/* Header flags, as in the second 16-bit word (the rcode bits excluded). */
#define HV_DNS_FLAG_QR 0x8000
#define HV_DNS_OPCODE_MASK 0x7800
#define HV_DNS_FLAG_AA 0x0400
#define HV_DNS_FLAG_TC 0x0200
#define HV_DNS_FLAG_RD 0x0100
#define HV_DNS_FLAG_RA 0x0080
#define HV_DNS_FLAG_Z 0x0040
#define HV_DNS_FLAG_AD 0x0020
#define HV_DNS_FLAG_CD 0x0010

enum
{
  HV_DNS_TYPE_A = 1,
  HV_DNS_TYPE_NS = 2,
  HV_DNS_TYPE_MD = 3,
  HV_DNS_TYPE_MF = 4,
  HV_DNS_TYPE_CNAME = 5,
  HV_DNS_TYPE_SOA = 6,
  HV_DNS_TYPE_MB = 7,
  HV_DNS_TYPE_MG = 8,
  HV_DNS_TYPE_MR = 9,
  HV_DNS_TYPE_PTR = 12,
  HV_DNS_TYPE_MINFO = 14,
  HV_DNS_TYPE_MX = 15,
  HV_DNS_TYPE_TXT = 16,
  HV_DNS_TYPE_AAAA = 28,
  HV_DNS_TYPE_OPT = 41,
  HV_DNS_CLASS_IN = 1,
};

enum
{
  HV_DNS_RCODE_NOERROR = 0,
  HV_DNS_RCODE_FORMERR = 1,
  HV_DNS_RCODE_SERVFAIL = 2,
  HV_DNS_RCODE_NXDOMAIN = 3,
  HV_DNS_RCODE_NOTIMP = 4,
  HV_DNS_RCODE_REFUSED = 5,
  HV_DNS_RCODE_BADVERS = 16, /* extended: needs OPT */
};

#define HV_DNS_OPT_EDE 15
/* RFC 8914 info codes haven uses. */
#define HV_DNS_EDE_OTHER 0
#define HV_DNS_EDE_BLOCKED 15
#define HV_DNS_EDE_PROHIBITED 18
#define HV_DNS_EDE_NETWORK_ERROR 23

/* A name in uncompressed wire form: length-prefixed labels ending with the
 * root label; len counts every byte (1 for the root). */
typedef struct hv_dns_name
{
  uint16_t len;
  uint8_t wire[HV_DNS_NAME_MAX];
} hv_dns_name;

typedef struct hv_dns_question
{
  hv_dns_name name;
  uint16_t type;
  uint16_t cls;
} hv_dns_question;

typedef struct hv_dns_rr
{
  hv_dns_name name;
  uint16_t type;
  uint16_t cls;
  uint32_t ttl;
  /* Owned, uncompressed (names in it decompressed; see above). */
  uint16_t rdlen;
  uint8_t *rdata;
  /* Decoded views of rdata, filled for their type only (read-only: the
   * encoder writes rdata, and the CNAME target). */
  struct in_addr a;       /* A */
  struct in6_addr aaaa;   /* AAAA */
  hv_dns_name *cname;     /* CNAME target, owned; NULL for other types */
} hv_dns_rr;

typedef struct hv_dns_option
{
  uint16_t code;
  uint16_t len;
  uint8_t *data; /* owned */
} hv_dns_option;

typedef struct hv_dns_ede
{
  uint16_t info_code;
  char *text; /* owned, NUL-terminated UTF-8 ("" when absent) */
} hv_dns_ede;

typedef struct hv_dns_edns
{
  uint16_t udp_size;
  uint8_t version;
  bool dnssec_ok;
  uint16_t z; /* the other flag bits, kept to re-encode what was read */
  hv_dns_option *options; /* in wire order; the source for encoding */
  size_t n_options;
  hv_dns_ede *ede; /* the EDE options among them, decoded */
  size_t n_ede;
} hv_dns_edns;

enum hv_dns_section
{
  HV_DNS_ANSWER = 0,
  HV_DNS_AUTHORITY = 1,
  HV_DNS_ADDITIONAL = 2,
};

typedef struct hv_dns_message
{
  uint16_t id;
  uint16_t flags;  /* HV_DNS_FLAG_*, opcode; rcode bits excluded */
  uint16_t rcode;  /* 12 bits with EDNS (extended bits from OPT), else 4 */
  hv_dns_question *questions;
  size_t n_questions;
  hv_dns_rr *rr[3]; /* by enum hv_dns_section; OPT is not among them */
  size_t n_rr[3];
  bool has_edns;
  hv_dns_edns edns;
} hv_dns_message;

/* Free what *m owns and zero it (m itself is the caller's). */
void hv_dns_message_free (hv_dns_message *m);
#define cleanup_dns_message __attribute__ ((cleanup (hv_dns_message_free)))

/* The id and flags word (rcode bits included) of what may be a DNS message,
 * without parsing the rest: -1 when shorter than a header. */
int hv_dns_peek_header (const uint8_t *buf, size_t len, uint16_t *id, uint16_t *flags);

/* Parse buf into *out (zeroed first; freed on error). */
int hv_dns_parse (const uint8_t *buf, size_t len, hv_dns_message *out, hv_error **err);

/* Encode m into buf, at most max_size bytes (clamped to cap and to 65535).
 * When the questions fit but an answer or authority record does not, the
 * reply carries the questions and OPT only, with TC set (the client retries
 * over TCP); additional records that do not fit are left out without TC.
 * *truncated (may be NULL) tells whether any record was left out. */
int hv_dns_encode (const hv_dns_message *m, uint8_t *buf, size_t cap, size_t max_size,
                   size_t *out_len, bool *truncated, hv_error **err);

/* Whether two messages say the same: header, questions, records (names
 * compared byte for byte) and EDNS. */
bool hv_dns_message_equal (const hv_dns_message *a, const hv_dns_message *b);

/* --- building ------------------------------------------------------------ */

/* A query for qname/qtype (class IN); edns_udp_size 0 sends no OPT. */
int hv_dns_query_init (hv_dns_message *m, uint16_t id, const hv_dns_name *qname, uint16_t qtype,
                       bool recursion_desired, uint16_t edns_udp_size, hv_error **err);

/* A reply to query with rcode and no records: same id, opcode and
 * questions, RD and CD copied, QR and RA set.  It carries OPT (advertising
 * udp_size) only when the query did (RFC 6891 7). */
int hv_dns_reply_init (hv_dns_message *reply, const hv_dns_message *query, uint16_t rcode,
                       uint16_t udp_size, hv_error **err);

/* Attach an Extended DNS Error.  The text (UTF-8, no NUL) is cut at a
 * character boundary to HV_DNS_EDE_TEXT_MAX bytes, so that a reply with
 * one EDE and any one question fits 512 bytes.  Returns 1 when attached,
 * 0 when m has no OPT to carry it (the query had none), -1 on error. */
int hv_dns_add_ede (hv_dns_message *m, uint16_t info_code, const char *text, hv_error **err);

/* Append a record; rdata in uncompressed wire form, validated and decoded
 * as if parsed.  Type OPT is refused (it lives in m->edns). */
int hv_dns_add_rr (hv_dns_message *m, enum hv_dns_section section, const hv_dns_name *owner,
                   uint16_t type, uint16_t cls, uint32_t ttl, const uint8_t *rdata, uint16_t rdlen,
                   hv_error **err);

/* Lower every record's TTL to at most max_ttl (OPT has none). */
void hv_dns_cap_ttls (hv_dns_message *m, uint32_t max_ttl);

/* The largest reply the client of query accepts over UDP: 512 without
 * EDNS, else its advertised size (at least 512). */
size_t hv_dns_reply_max_size (const hv_dns_message *query);

/* --- names --------------------------------------------------------------- */

/* Text ("www.example.com", trailing dot optional, "." the root, \. and
 * \DDD escapes) to a name. */
int hv_dns_name_from_text (const char *text, hv_dns_name *out, hv_error **err);
/* A name to text without the trailing dot ("." for the root); buf holds
 * HV_DNS_NAME_TEXT_MAX bytes.  Returns buf. */
char *hv_dns_name_to_text (const hv_dns_name *name, char *buf);
/* Equal ignoring ASCII case only (RFC 4343: other bytes compare exactly). */
bool hv_dns_name_equal (const hv_dns_name *a, const hv_dns_name *b);

/* --- the CNAME chain ----------------------------------------------------- */

typedef struct hv_dns_address
{
  int family; /* AF_INET or AF_INET6 */
  union
  {
    struct in_addr v4;
    struct in6_addr v6;
  };
  uint32_t ttl;
} hv_dns_address;

typedef struct hv_dns_chain
{
  hv_dns_name names[HV_DNS_MAX_CHAIN]; /* the queried name, then each target */
  size_t n_names;
  uint32_t cname_ttl;      /* lowest TTL of the chain's CNAMEs; UINT32_MAX if none */
  hv_dns_address *addrs;   /* owned */
  size_t n_addrs;
} hv_dns_chain;

/* From qname, follow CNAME records of class IN in the answer section only
 * (authority and additional records are not answers, and a record whose
 * owner is not on the chain is ignored: an upstream cannot make us pin an
 * address for a name nobody asked about), and collect the A and AAAA
 * records of the last name.  A loop, two CNAMEs for one owner or a chain
 * longer than HV_DNS_MAX_CHAIN names is an error. */
int hv_dns_follow_chain (const hv_dns_message *resp, const hv_dns_name *qname, hv_dns_chain *out,
                         hv_error **err);
void hv_dns_chain_free (hv_dns_chain *c);

/* A DNS type as text: "A", "AAAA", ... or "TYPE123" (RFC 3597), in buf. */
const char *hv_dns_type_name (uint16_t qtype, char buf[16]);

#endif
