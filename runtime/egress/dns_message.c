/* DNS message codec (see dns_message.h for what it accepts and refuses). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "dns_message.h"
#include "utf8.h"

/* Wire sizes the parser bounds a message by before it reads it. */
#define QUESTION_MIN_LEN 5 /* a question: the root name, type, class */
#define RR_FIXED_LEN 10    /* a record after its name: type, class, TTL, rdata length */
#define RR_MIN_LEN (1 + RR_FIXED_LEN) /* a record with the root name and no rdata (OPT's size) */
#define SOA_FIXED_LEN 20   /* SOA rdata after its two names: five 32-bit numbers */

static const char *const section_names[] = { "answer", "authority", "additional" };

static uint16_t
get16 (const uint8_t *p)
{
  return (uint16_t) ((p[0] << 8) | p[1]);
}

static uint32_t
get32 (const uint8_t *p)
{
  return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static void
put16 (uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t) (v >> 8);
  p[1] = (uint8_t) v;
}

static void
put32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

static void *
memdup_or_null (const void *p, size_t n)
{
  if (n == 0)
    return NULL;
  void *r = xmalloc0 (n);
  memcpy (r, p, n);
  return r;
}

/* --- freeing -------------------------------------------------------------- */

static void
rr_free (hv_dns_rr *rr)
{
  free (rr->rdata);
  free (rr->cname);
  rr->rdata = NULL;
  rr->cname = NULL;
}

static void
edns_free (hv_dns_edns *e)
{
  for (size_t i = 0; i < e->n_options; i++)
    free (e->options[i].data);
  free (e->options);
  for (size_t i = 0; i < e->n_ede; i++)
    free (e->ede[i].text);
  free (e->ede);
  memset (e, 0, sizeof (*e));
}

void
hv_dns_message_free (hv_dns_message *m)
{
  if (m == NULL)
    return;
  free (m->questions);
  for (int s = 0; s < 3; s++)
    {
      for (size_t i = 0; i < m->n_rr[s]; i++)
        rr_free (&m->rr[s][i]);
      free (m->rr[s]);
    }
  edns_free (&m->edns);
  memset (m, 0, sizeof (*m));
}

/* --- names ---------------------------------------------------------------- */

/* Read the possibly compressed name at *pos of msg[0..len) into out; *pos
 * moves past the name as it sits at *pos (to after its first pointer).
 * Termination does not rest on the hop bound alone: a pointer must point
 * before the start of the label run that reached it, so the runs start at
 * strictly decreasing offsets.  A pointer merely "before itself" is not
 * enough: it may land inside a label whose run then reaches the pointer
 * again. */
static int
read_name (const uint8_t *msg, size_t len, size_t *pos, hv_dns_name *out, hv_error **err)
{
  size_t p = *pos;
  size_t run_start = p;
  size_t end = 0; /* where the name ends at *pos; 0 until the first pointer */
  unsigned hops = 0;
  out->len = 0;
  for (;;)
    {
      if (p >= len)
        return hv_error_set (err, 0, "name at offset %zu runs past the end of the message", *pos);
      uint8_t b = msg[p];
      if ((b & 0xC0) == 0xC0)
        {
          if (p + 1 >= len)
            return hv_error_set (err, 0, "name at offset %zu: compression pointer cut off by the end of the message", *pos);
          size_t target = ((size_t) (b & 0x3F) << 8) | msg[p + 1];
          if (target >= run_start)
            return hv_error_set (err, 0,
                                 "name at offset %zu: compression pointer at offset %zu to %zu does not point backwards",
                                 *pos, p, target);
          if (++hops > HV_DNS_MAX_HOPS)
            return hv_error_set (err, 0, "name at offset %zu: more than %d compression pointers", *pos,
                                 HV_DNS_MAX_HOPS);
          if (end == 0)
            end = p + 2;
          p = run_start = target;
          continue;
        }
      if ((b & 0xC0) != 0)
        return hv_error_set (err, 0, "name at offset %zu: label type 0x%02x at offset %zu is not supported",
                             *pos, b & 0xC0, p);
      if (p + 1 + b > len)
        return hv_error_set (err, 0, "name at offset %zu: label at offset %zu runs past the end of the message",
                             *pos, p);
      /* +1: the root label must still fit after this one. */
      if ((size_t) out->len + 1 + b + (b ? 1 : 0) > HV_DNS_NAME_MAX)
        return hv_error_set (err, 0, "name at offset %zu is longer than %d bytes", *pos, HV_DNS_NAME_MAX);
      memcpy (out->wire + out->len, msg + p, 1 + (size_t) b);
      out->len = (uint16_t) (out->len + 1 + b);
      p += 1 + (size_t) b;
      if (b == 0)
        break;
    }
  *pos = end ? end : p;
  return 0;
}

/* The labels of a name in wire form, validated (used for names that do not
 * come from read_name: built ones). */
static int
check_name (const hv_dns_name *n, hv_error **err)
{
  size_t p = 0;
  if (n->len == 0 || n->len > HV_DNS_NAME_MAX)
    return hv_error_set (err, 0, "name of %u bytes", n->len);
  while (p < n->len)
    {
      uint8_t b = n->wire[p];
      if (b > HV_DNS_LABEL_MAX)
        return hv_error_set (err, 0, "name has a label of %u bytes", b);
      if (b == 0)
        return p + 1 == n->len ? 0 : hv_error_set (err, 0, "name has an empty label");
      p += 1 + (size_t) b;
    }
  return hv_error_set (err, 0, "name does not end with the root label");
}

static uint8_t
ascii_lower (uint8_t c)
{
  return c >= 'A' && c <= 'Z' ? (uint8_t) (c + 32) : c;
}

bool
hv_dns_name_equal (const hv_dns_name *a, const hv_dns_name *b)
{
  if (a->len != b->len)
    return false;
  /* Length bytes compare equal under ascii_lower too (all are <= 63), so
   * one loop covers labels and lengths. */
  for (size_t i = 0; i < a->len; i++)
    if (ascii_lower (a->wire[i]) != ascii_lower (b->wire[i]))
      return false;
  return true;
}

char *
hv_dns_name_to_text (const hv_dns_name *name, char *buf)
{
  size_t o = 0;
  size_t p = 0;
  if (name->len <= 1)
    {
      strcpy (buf, ".");
      return buf;
    }
  while (p < name->len && name->wire[p] != 0)
    {
      uint8_t l = name->wire[p++];
      if (o > 0)
        buf[o++] = '.';
      for (uint8_t i = 0; i < l && p < name->len; i++, p++)
        {
          uint8_t c = name->wire[p];
          if (c == '.' || c == '\\')
            {
              buf[o++] = '\\';
              buf[o++] = (char) c;
            }
          else if (c <= 0x20 || c >= 0x7f)
            o += (size_t) snprintf (buf + o, 5, "\\%03u", c);
          else
            buf[o++] = (char) c;
        }
    }
  buf[o] = '\0';
  return buf;
}

int
hv_dns_name_from_text (const char *text, hv_dns_name *out, hv_error **err)
{
  size_t n = 0;
  const char *s = text;
  memset (out, 0, sizeof (*out));
  if (strcmp (text, ".") == 0)
    {
      out->len = 1;
      return 0;
    }
  if (*s == '\0')
    return hv_error_set (err, 0, "empty DNS name");
  while (*s)
    {
      size_t lpos = n++;
      size_t l = 0;
      while (*s && *s != '.')
        {
          unsigned c = (unsigned char) *s++;
          if (c == '\\')
            {
              if (s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9')
                {
                  c = (unsigned) ((s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0'));
                  s += 3;
                  if (c > 255)
                    return hv_error_set (err, 0, "DNS name \"%s\": escape \\%u is not a byte", text, c);
                }
              else if (*s)
                c = (unsigned char) *s++;
              else
                return hv_error_set (err, 0, "DNS name \"%s\" ends with a backslash", text);
            }
          if (++l > HV_DNS_LABEL_MAX)
            return hv_error_set (err, 0, "DNS name \"%s\" has a label longer than %d bytes", text, HV_DNS_LABEL_MAX);
          if (n + 1 >= HV_DNS_NAME_MAX)
            return hv_error_set (err, 0, "DNS name \"%s\" is longer than %d bytes", text, HV_DNS_NAME_MAX);
          out->wire[n++] = (uint8_t) c;
        }
      if (l == 0)
        return hv_error_set (err, 0, "DNS name \"%s\" has an empty label", text);
      out->wire[lpos] = (uint8_t) l;
      if (*s == '.')
        s++;
    }
  out->wire[n++] = 0;
  out->len = (uint16_t) n;
  return 0;
}

/* --- UTF-8 ------------------------------------------------------------------ */

/* Whether s[0..n) is UTF-8 without NUL; *cut (if not NULL) gets the longest
 * prefix <= max that ends on a character boundary. */
static bool
utf8_valid (const uint8_t *s, size_t n, size_t max, size_t *cut)
{
  size_t i = 0;
  size_t last = 0;
  while (i < n)
    {
      size_t l = s[i] == 0 ? 0 : hv_utf8_seq_len (s + i, n - i);
      if (l == 0)
        return false;
      i += l;
      if (i <= max)
        last = i;
    }
  if (cut)
    *cut = last;
  return true;
}

/* --- records ---------------------------------------------------------------- */

/* Decode the rdata at msg[start..start+rdlen) into rr (owned copies).  For
 * a record built rather than parsed, msg is the rdata itself and start 0:
 * a compression pointer in it then has nothing before it to point to. */
static int
decode_rdata (const uint8_t *msg, size_t start, uint16_t rdlen, hv_dns_rr *rr,
              hv_error **err)
{
  size_t end = start + rdlen;
  /* Names are read with the whole message as context (pointers), but may
   * not run past the rdata. */
  uint8_t buf[2 * HV_DNS_NAME_MAX + SOA_FIXED_LEN]; /* the most: SOA's */
  size_t out = 0;
  size_t p = start;
  int names = 0;
  size_t fixed_before = 0, fixed_after = 0;

  switch (rr->type)
    {
    case HV_DNS_TYPE_A:
      if (rdlen != 4)
        return hv_error_set (err, 0, "A rdata of %u bytes", rdlen);
      memcpy (&rr->a, msg + start, 4);
      rr->rdata = memdup_or_null (msg + start, 4);
      rr->rdlen = 4;
      return 0;
    case HV_DNS_TYPE_AAAA:
      if (rdlen != 16)
        return hv_error_set (err, 0, "AAAA rdata of %u bytes", rdlen);
      memcpy (&rr->aaaa, msg + start, 16);
      rr->rdata = memdup_or_null (msg + start, 16);
      rr->rdlen = 16;
      return 0;
    case HV_DNS_TYPE_NS:
    case HV_DNS_TYPE_MD:
    case HV_DNS_TYPE_MF:
    case HV_DNS_TYPE_CNAME:
    case HV_DNS_TYPE_MB:
    case HV_DNS_TYPE_MG:
    case HV_DNS_TYPE_MR:
    case HV_DNS_TYPE_PTR:
      names = 1;
      break;
    case HV_DNS_TYPE_MINFO:
      names = 2;
      break;
    case HV_DNS_TYPE_MX:
      names = 1;
      fixed_before = 2;
      break;
    case HV_DNS_TYPE_SOA:
      names = 2;
      fixed_after = SOA_FIXED_LEN;
      break;
    default:
      rr->rdata = memdup_or_null (msg + start, rdlen);
      rr->rdlen = rdlen;
      return 0;
    }

  /* A type with names in its rdata, which RFC 1035 lets a server compress:
   * store it decompressed. */
  if (fixed_before > rdlen)
    return hv_error_set (err, 0, "type %u rdata of %u bytes", rr->type, rdlen);
  memcpy (buf, msg + p, fixed_before);
  out = fixed_before;
  p += fixed_before;
  for (int i = 0; i < names; i++)
    {
      hv_dns_name n;
      /* Bound the read to the rdata: a name that runs past it belongs to
       * the next record. */
      size_t q = p;
      if (read_name (msg, end, &q, &n, err) < 0)
        return hv_error_wrap (err, "type %u rdata", rr->type);
      if (rr->type == HV_DNS_TYPE_CNAME)
        {
          rr->cname = xmalloc0 (sizeof (*rr->cname));
          *rr->cname = n;
        }
      memcpy (buf + out, n.wire, n.len);
      out += n.len;
      p = q;
    }
  if (end - p != fixed_after)
    return hv_error_set (err, 0, "type %u rdata: %zu bytes after its names, expected %zu", rr->type,
                         end - p, fixed_after);
  memcpy (buf + out, msg + p, fixed_after);
  out += fixed_after;
  rr->rdata = memdup_or_null (buf, out);
  rr->rdlen = (uint16_t) out;
  return 0;
}

static int
parse_ede (const hv_dns_option *o, hv_dns_ede *ede, hv_error **err)
{
  if (o->len < 2)
    return hv_error_set (err, 0, "Extended DNS Error option of %u bytes, shorter than its info code", o->len);
  size_t tlen = o->len - 2u;
  if (!utf8_valid (o->data + 2, tlen, tlen, NULL))
    return hv_error_set (err, 0, "Extended DNS Error text is not UTF-8 without NUL");
  ede->info_code = get16 (o->data);
  ede->text = xmalloc0 (tlen + 1);
  memcpy (ede->text, o->data + 2, tlen);
  return 0;
}

static int
parse_opt (const uint8_t *msg, size_t rdstart, uint16_t rdlen, uint16_t cls, uint32_t ttl,
           hv_dns_message *m, hv_error **err)
{
  hv_dns_edns *e = &m->edns;
  e->udp_size = cls;
  m->rcode = (uint16_t) (((ttl >> 24) << 4) | m->rcode);
  e->version = (uint8_t) (ttl >> 16);
  e->dnssec_ok = (ttl & 0x8000) != 0;
  e->z = (uint16_t) (ttl & 0x7FFF);
  size_t p = rdstart, end = rdstart + rdlen;
  /* Two passes: count, then fill (an option is at least 4 bytes, so the
   * count is bounded by rdlen / 4). */
  size_t n = 0;
  while (p < end)
    {
      if (end - p < 4)
        return hv_error_set (err, 0, "OPT: option header at offset %zu cut off", p);
      uint16_t olen = get16 (msg + p + 2);
      if (end - p - 4 < olen)
        return hv_error_set (err, 0, "OPT: option at offset %zu runs past the record", p);
      p += 4u + olen;
      n++;
    }
  e->options = n ? xmalloc0 (n * sizeof (*e->options)) : NULL;
  for (p = rdstart; p < end;)
    {
      hv_dns_option *o = &e->options[e->n_options++];
      o->code = get16 (msg + p);
      o->len = get16 (msg + p + 2);
      o->data = memdup_or_null (msg + p + 4, o->len);
      p += 4u + o->len;
      if (o->code == HV_DNS_OPT_EDE)
        {
          e->ede = xrealloc (e->ede, (e->n_ede + 1) * sizeof (*e->ede));
          memset (&e->ede[e->n_ede], 0, sizeof (*e->ede));
          if (parse_ede (o, &e->ede[e->n_ede], err) < 0)
            return -1;
          e->n_ede++;
        }
    }
  return 0;
}

int
hv_dns_peek_header (const uint8_t *buf, size_t len, uint16_t *id, uint16_t *flags)
{
  if (len < HV_DNS_HEADER_LEN)
    return -1;
  *id = get16 (buf);
  *flags = get16 (buf + 2);
  return 0;
}

static int
parse_into (const uint8_t *msg, size_t len, hv_dns_message *m, hv_error **err)
{
  if (len < HV_DNS_HEADER_LEN)
    return hv_error_set (err, 0, "%zu bytes, shorter than a DNS header", len);
  if (len > HV_DNS_MESSAGE_MAX)
    return hv_error_set (err, 0, "%zu bytes, longer than a DNS message can be", len);
  m->id = get16 (msg);
  m->flags = get16 (msg + 2) & 0xFFF0;
  m->rcode = get16 (msg + 2) & 0x000F;
  size_t qd = get16 (msg + 4);
  size_t counts[3] = { get16 (msg + 6), get16 (msg + 8), get16 (msg + 10) };

  /* Counts that lie high are caught before any allocation: a question takes
   * at least 5 bytes (root name, type, class), a record 11. */
  size_t total = qd + counts[0] + counts[1] + counts[2];
  if (total > HV_DNS_MAX_RECORDS)
    return hv_error_set (err, 0, "%zu questions and records, more than %d", total, HV_DNS_MAX_RECORDS);
  if (qd * QUESTION_MIN_LEN + (counts[0] + counts[1] + counts[2]) * RR_MIN_LEN > len - HV_DNS_HEADER_LEN)
    return hv_error_set (err, 0, "counts (%zu questions, %zu/%zu/%zu records) need more than the %zu bytes after the header",
                         qd, counts[0], counts[1], counts[2], len - HV_DNS_HEADER_LEN);

  size_t p = HV_DNS_HEADER_LEN;
  m->questions = qd ? xmalloc0 (qd * sizeof (*m->questions)) : NULL;
  for (size_t i = 0; i < qd; i++)
    {
      hv_dns_question *q = &m->questions[i];
      if (read_name (msg, len, &p, &q->name, err) < 0)
        return hv_error_wrap (err, "question %zu", i + 1);
      if (len - p < 4)
        return hv_error_set (err, 0, "question %zu: type and class cut off at offset %zu", i + 1, p);
      q->type = get16 (msg + p);
      q->cls = get16 (msg + p + 2);
      p += 4;
      m->n_questions++;
    }

  for (int s = 0; s < 3; s++)
    {
      m->rr[s] = counts[s] ? xmalloc0 (counts[s] * sizeof (*m->rr[s])) : NULL;
      for (size_t i = 0; i < counts[s]; i++)
        {
          hv_dns_rr *rr = &m->rr[s][m->n_rr[s]];
          size_t at = p;
          if (read_name (msg, len, &p, &rr->name, err) < 0)
            return hv_error_wrap (err, "%s record %zu", section_names[s], i + 1);
          if (len - p < RR_FIXED_LEN)
            return hv_error_set (err, 0, "%s record %zu at offset %zu: fields cut off", section_names[s], i + 1, at);
          rr->type = get16 (msg + p);
          rr->cls = get16 (msg + p + 2);
          rr->ttl = get32 (msg + p + 4);
          uint16_t rdlen = get16 (msg + p + 8);
          p += RR_FIXED_LEN;
          if (len - p < rdlen)
            return hv_error_set (err, 0, "%s record %zu at offset %zu: %u bytes of rdata run past the end",
                                 section_names[s], i + 1, at, rdlen);
          if (rr->type == HV_DNS_TYPE_OPT)
            {
              if (s != HV_DNS_ADDITIONAL)
                return hv_error_set (err, 0, "%s record %zu: OPT outside the additional section", section_names[s], i + 1);
              if (m->has_edns)
                return hv_error_set (err, 0, "additional record %zu: a second OPT", i + 1);
              if (rr->name.len != 1)
                return hv_error_set (err, 0, "additional record %zu: OPT owner is not the root", i + 1);
              m->has_edns = true;
              if (parse_opt (msg, p, rdlen, rr->cls, rr->ttl, m, err) < 0)
                return hv_error_wrap (err, "additional record %zu", i + 1);
              p += rdlen;
              memset (rr, 0, sizeof (*rr));
              continue; /* not kept among the records */
            }
          /* RFC 2181 8: a TTL with the top bit set means zero. */
          if (rr->ttl & 0x80000000u)
            rr->ttl = 0;
          m->n_rr[s]++;
          if (decode_rdata (msg, p, rdlen, rr, err) < 0)
            return hv_error_wrap (err, "%s record %zu at offset %zu", section_names[s], i + 1, at);
          p += rdlen;
        }
    }
  if (p != len)
    return hv_error_set (err, 0, "%zu bytes after the last record the counts announce", len - p);
  return 0;
}

int
hv_dns_parse (const uint8_t *buf, size_t len, hv_dns_message *out, hv_error **err)
{
  memset (out, 0, sizeof (*out));
  if (parse_into (buf, len, out, err) < 0)
    {
      hv_dns_message_free (out);
      return hv_error_wrap (err, "DNS message");
    }
  return 0;
}

/* --- encoding ---------------------------------------------------------------- */

/* Names already written, by suffix: a later name whose suffix equals one
 * (byte for byte, so the case a client chose, 0x20 randomisation included,
 * comes back exactly) points at it.  Entries point into the message being
 * encoded, which outlives the writer. */
#define COMP_ENTRIES 256
struct comp_entry
{
  const uint8_t *wire;
  uint16_t len;
  uint16_t offset;
};

struct writer
{
  uint8_t *buf;
  size_t limit;
  size_t len;
  struct comp_entry comp[COMP_ENTRIES];
  size_t n_comp;
};

/* false when the bytes do not fit under the limit. */
static bool
w_put (struct writer *w, const void *p, size_t n)
{
  if (w->limit - w->len < n)
    return false;
  if (n == 0)
    return true; /* p may be NULL: an empty rdata or option owns nothing */
  memcpy (w->buf + w->len, p, n);
  w->len += n;
  return true;
}

static bool
w_put16 (struct writer *w, uint16_t v)
{
  uint8_t b[2];
  put16 (b, v);
  return w_put (w, b, 2);
}

static bool
w_name (struct writer *w, const hv_dns_name *n, bool compress)
{
  size_t p = 0;
  while (p < n->len && n->wire[p] != 0)
    {
      const uint8_t *suffix = n->wire + p;
      uint16_t slen = (uint16_t) (n->len - p);
      if (compress)
        for (size_t i = 0; i < w->n_comp; i++)
          if (w->comp[i].len == slen && memcmp (w->comp[i].wire, suffix, slen) == 0)
            return w_put16 (w, (uint16_t) (0xC000 | w->comp[i].offset));
      /* Only offsets a pointer can hold (14 bits) are worth remembering. */
      if (compress && w->n_comp < COMP_ENTRIES && w->len < 0x4000)
        w->comp[w->n_comp++] = (struct comp_entry){ suffix, slen, (uint16_t) w->len };
      if (!w_put (w, suffix, 1u + suffix[0]))
        return false;
      p += 1u + suffix[0];
    }
  return w_put (w, "", 1);
}

static bool
w_rr (struct writer *w, const hv_dns_rr *rr)
{
  uint8_t f[8];
  if (!w_name (w, &rr->name, true))
    return false;
  put16 (f, rr->type);
  put16 (f + 2, rr->cls);
  put32 (f + 4, rr->ttl);
  if (!w_put (w, f, 8))
    return false;
  size_t rdlen_at = w->len;
  if (!w_put16 (w, 0))
    return false;
  if (rr->type == HV_DNS_TYPE_CNAME && rr->cname)
    {
      if (!w_name (w, rr->cname, true))
        return false;
    }
  else if (!w_put (w, rr->rdata, rr->rdlen))
    return false;
  put16 (w->buf + rdlen_at, (uint16_t) (w->len - rdlen_at - 2));
  return true;
}

static size_t
opt_size (const hv_dns_edns *e)
{
  size_t n = RR_MIN_LEN; /* the root name, then the fixed fields */
  for (size_t i = 0; i < e->n_options; i++)
    n += 4u + e->options[i].len;
  return n;
}

int
hv_dns_encode (const hv_dns_message *m, uint8_t *buf, size_t cap, size_t max_size, size_t *out_len,
               bool *truncated, hv_error **err)
{
  cleanup_free struct writer *w = xmalloc0 (sizeof (*w));
  size_t limit = max_size < cap ? max_size : cap;
  if (limit > HV_DNS_MESSAGE_MAX)
    limit = HV_DNS_MESSAGE_MAX;
  if (truncated)
    *truncated = false;
  if (m->rcode > 0xFFF || (m->rcode > 15 && !m->has_edns))
    return hv_error_set (err, 0, "DNS message: rcode %u needs %s", m->rcode, m->rcode > 0xFFF ? "more than 12 bits" : "OPT");
  size_t opt = m->has_edns ? opt_size (&m->edns) : 0;
  if (opt > 65535 || HV_DNS_HEADER_LEN + opt > limit)
    return hv_error_set (err, 0, "DNS message: header and OPT do not fit %zu bytes", limit);
  w->buf = buf;
  w->limit = limit - opt;
  uint16_t flags = (uint16_t) ((m->flags & 0xFFF0) | (m->rcode & 0xF));
  uint8_t h[HV_DNS_HEADER_LEN] = { 0 };
  put16 (h, m->id);
  if (!w_put (w, h, HV_DNS_HEADER_LEN))
    return hv_error_set (err, 0, "DNS message: header does not fit %zu bytes", limit);
  for (size_t i = 0; i < m->n_questions; i++)
    {
      const hv_dns_question *q = &m->questions[i];
      if (!w_name (w, &q->name, true) || !w_put16 (w, q->type) || !w_put16 (w, q->cls))
        return hv_error_set (err, 0, "DNS message: question %zu does not fit %zu bytes", i + 1, limit);
    }
  size_t after_questions = w->len, comp_after_questions = w->n_comp;
  size_t counts[3] = { 0, 0, 0 };
  for (int s = 0; s < 3; s++)
    for (size_t i = 0; i < m->n_rr[s]; i++)
      {
        size_t before = w->len, comp_before = w->n_comp;
        if (w_rr (w, &m->rr[s][i]))
          {
            counts[s]++;
            continue;
          }
        if (truncated)
          *truncated = true;
        if (s == HV_DNS_ADDITIONAL)
          {
            /* Additional data is optional (RFC 2181 9): leave out the rest. */
            w->len = before;
            w->n_comp = comp_before;
            goto done;
          }
        /* A partial answer would be taken for a whole one; send none and
         * let TC tell the client to ask over TCP. */
        w->len = after_questions;
        w->n_comp = comp_after_questions;
        counts[0] = counts[1] = counts[2] = 0;
        flags |= HV_DNS_FLAG_TC;
        goto done;
      }
done:
  if (m->has_edns)
    {
      const hv_dns_edns *e = &m->edns;
      w->limit = limit;
      uint8_t f[RR_FIXED_LEN];
      uint32_t ttl = ((uint32_t) (m->rcode >> 4) << 24) | ((uint32_t) e->version << 16)
                     | (e->dnssec_ok ? 0x8000u : 0) | (e->z & 0x7FFFu);
      put16 (f, HV_DNS_TYPE_OPT);
      put16 (f + 2, e->udp_size);
      put32 (f + 4, ttl);
      put16 (f + 8, (uint16_t) (opt - RR_MIN_LEN));
      w_put (w, "", 1);
      w_put (w, f, RR_FIXED_LEN);
      for (size_t i = 0; i < e->n_options; i++)
        {
          w_put16 (w, e->options[i].code);
          w_put16 (w, e->options[i].len);
          w_put (w, e->options[i].data, e->options[i].len);
        }
      counts[2]++;
    }
  put16 (buf + 2, flags);
  put16 (buf + 4, (uint16_t) m->n_questions);
  put16 (buf + 6, (uint16_t) counts[0]);
  put16 (buf + 8, (uint16_t) counts[1]);
  put16 (buf + 10, (uint16_t) counts[2]);
  *out_len = w->len;
  return 0;
}

/* --- equality ------------------------------------------------------------------ */

static bool
name_same (const hv_dns_name *a, const hv_dns_name *b)
{
  return a->len == b->len && memcmp (a->wire, b->wire, a->len) == 0;
}

static bool
rr_same (const hv_dns_rr *a, const hv_dns_rr *b)
{
  return name_same (&a->name, &b->name) && a->type == b->type && a->cls == b->cls && a->ttl == b->ttl
         && a->rdlen == b->rdlen && (a->rdlen == 0 || memcmp (a->rdata, b->rdata, a->rdlen) == 0);
}

bool
hv_dns_message_equal (const hv_dns_message *a, const hv_dns_message *b)
{
  if (a->id != b->id || a->flags != b->flags || a->rcode != b->rcode || a->n_questions != b->n_questions
      || a->has_edns != b->has_edns)
    return false;
  for (size_t i = 0; i < a->n_questions; i++)
    if (!name_same (&a->questions[i].name, &b->questions[i].name) || a->questions[i].type != b->questions[i].type
        || a->questions[i].cls != b->questions[i].cls)
      return false;
  for (int s = 0; s < 3; s++)
    {
      if (a->n_rr[s] != b->n_rr[s])
        return false;
      for (size_t i = 0; i < a->n_rr[s]; i++)
        if (!rr_same (&a->rr[s][i], &b->rr[s][i]))
          return false;
    }
  if (a->has_edns)
    {
      const hv_dns_edns *x = &a->edns, *y = &b->edns;
      if (x->udp_size != y->udp_size || x->version != y->version || x->dnssec_ok != y->dnssec_ok || x->z != y->z
          || x->n_options != y->n_options)
        return false;
      for (size_t i = 0; i < x->n_options; i++)
        if (x->options[i].code != y->options[i].code || x->options[i].len != y->options[i].len
            || (x->options[i].len && memcmp (x->options[i].data, y->options[i].data, x->options[i].len) != 0))
          return false;
    }
  return true;
}

/* --- building ------------------------------------------------------------------ */

static size_t
total_records (const hv_dns_message *m)
{
  return m->n_questions + m->n_rr[0] + m->n_rr[1] + m->n_rr[2];
}

int
hv_dns_query_init (hv_dns_message *m, uint16_t id, const hv_dns_name *qname, uint16_t qtype,
                   bool recursion_desired, uint16_t edns_udp_size, hv_error **err)
{
  memset (m, 0, sizeof (*m));
  if (check_name (qname, err) < 0)
    return hv_error_wrap (err, "DNS query");
  m->id = id;
  m->flags = recursion_desired ? HV_DNS_FLAG_RD : 0;
  m->questions = xmalloc0 (sizeof (*m->questions));
  m->questions[0] = (hv_dns_question){ *qname, qtype, HV_DNS_CLASS_IN };
  m->n_questions = 1;
  if (edns_udp_size)
    {
      m->has_edns = true;
      m->edns.udp_size = edns_udp_size < HV_DNS_UDP_MIN ? HV_DNS_UDP_MIN : edns_udp_size;
    }
  return 0;
}

int
hv_dns_reply_init (hv_dns_message *reply, const hv_dns_message *query, uint16_t rcode, uint16_t udp_size,
                   hv_error **err)
{
  memset (reply, 0, sizeof (*reply));
  if (rcode > 15 && !query->has_edns)
    return hv_error_set (err, 0, "DNS reply: rcode %u needs OPT, and the query had none", rcode);
  if (rcode > 0xFFF)
    return hv_error_set (err, 0, "DNS reply: rcode %u", rcode);
  reply->id = query->id;
  reply->flags = (uint16_t) (HV_DNS_FLAG_QR | HV_DNS_FLAG_RA
                             | (query->flags & (HV_DNS_OPCODE_MASK | HV_DNS_FLAG_RD | HV_DNS_FLAG_CD)));
  reply->rcode = rcode;
  reply->questions = memdup_or_null (query->questions, query->n_questions * sizeof (*query->questions));
  reply->n_questions = query->n_questions;
  if (query->has_edns)
    {
      reply->has_edns = true;
      reply->edns.udp_size = udp_size < HV_DNS_UDP_MIN ? HV_DNS_UDP_MIN : udp_size;
      /* DO is echoed (RFC 3225 3); the other flag bits are not ours to set. */
      reply->edns.dnssec_ok = query->edns.dnssec_ok;
    }
  return 0;
}

int
hv_dns_add_ede (hv_dns_message *m, uint16_t info_code, const char *text, hv_error **err)
{
  if (!m->has_edns)
    return 0;
  size_t tlen = strlen (text), cut;
  if (!utf8_valid ((const uint8_t *) text, tlen, HV_DNS_EDE_TEXT_MAX, &cut))
    return hv_error_set (err, 0, "Extended DNS Error text is not UTF-8");
  hv_dns_edns *e = &m->edns;
  if (e->n_options >= HV_DNS_MAX_OPTIONS)
    return hv_error_set (err, 0, "DNS message: too many EDNS options");
  e->options = xrealloc (e->options, (e->n_options + 1) * sizeof (*e->options));
  hv_dns_option *o = &e->options[e->n_options++];
  o->code = HV_DNS_OPT_EDE;
  o->len = (uint16_t) (2 + cut);
  o->data = xmalloc0 (o->len);
  put16 (o->data, info_code);
  memcpy (o->data + 2, text, cut);
  e->ede = xrealloc (e->ede, (e->n_ede + 1) * sizeof (*e->ede));
  e->ede[e->n_ede].info_code = info_code;
  e->ede[e->n_ede].text = xmalloc0 (cut + 1);
  memcpy (e->ede[e->n_ede].text, text, cut);
  e->n_ede++;
  return 1;
}

int
hv_dns_add_rr (hv_dns_message *m, enum hv_dns_section section, const hv_dns_name *owner, uint16_t type,
               uint16_t cls, uint32_t ttl, const uint8_t *rdata, uint16_t rdlen, hv_error **err)
{
  if ((unsigned) section > HV_DNS_ADDITIONAL)
    return hv_error_set (err, 0, "DNS record: no section %d", (int) section);
  if (type == HV_DNS_TYPE_OPT)
    return hv_error_set (err, 0, "DNS record: OPT is set through the message's EDNS fields");
  if (total_records (m) >= HV_DNS_MAX_RECORDS)
    return hv_error_set (err, 0, "DNS message: more than %d questions and records", HV_DNS_MAX_RECORDS);
  if (check_name (owner, err) < 0)
    return hv_error_wrap (err, "DNS record owner");
  hv_dns_rr rr = { .name = *owner, .type = type, .cls = cls, .ttl = ttl & 0x80000000u ? 0 : ttl };
  static const uint8_t empty[1];
  if (decode_rdata (rdlen ? rdata : empty, 0, rdlen, &rr, err) < 0)
    {
      rr_free (&rr);
      return hv_error_wrap (err, "DNS record");
    }
  m->rr[section] = xrealloc (m->rr[section], (m->n_rr[section] + 1) * sizeof (rr));
  m->rr[section][m->n_rr[section]++] = rr;
  return 0;
}

void
hv_dns_cap_ttls (hv_dns_message *m, uint32_t max_ttl)
{
  for (int s = 0; s < 3; s++)
    for (size_t i = 0; i < m->n_rr[s]; i++)
      if (m->rr[s][i].ttl > max_ttl)
        m->rr[s][i].ttl = max_ttl;
}

size_t
hv_dns_reply_max_size (const hv_dns_message *query)
{
  if (!query->has_edns || query->edns.udp_size < HV_DNS_UDP_MIN)
    return HV_DNS_UDP_MIN;
  return query->edns.udp_size;
}

/* --- CNAME chain ------------------------------------------------------------------ */

void
hv_dns_chain_free (hv_dns_chain *c)
{
  free (c->addrs);
  memset (c, 0, sizeof (*c));
}

int
hv_dns_follow_chain (const hv_dns_message *resp, const hv_dns_name *qname, hv_dns_chain *out, hv_error **err)
{
  char t1[HV_DNS_NAME_TEXT_MAX];
  const hv_dns_rr *ans = resp->rr[HV_DNS_ANSWER];
  size_t n = resp->n_rr[HV_DNS_ANSWER];
  memset (out, 0, sizeof (*out));
  out->cname_ttl = UINT32_MAX;
  out->names[out->n_names++] = *qname;
  for (;;)
    {
      const hv_dns_name *cur = &out->names[out->n_names - 1];
      const hv_dns_rr *cname = NULL;
      for (size_t i = 0; i < n; i++)
        if (ans[i].type == HV_DNS_TYPE_CNAME && ans[i].cls == HV_DNS_CLASS_IN && ans[i].cname
            && hv_dns_name_equal (&ans[i].name, cur))
          {
            /* A second CNAME for one owner is not a chain but a choice the
             * sender made for us: refuse rather than pick. */
            if (cname && !hv_dns_name_equal (cname->cname, ans[i].cname))
              return hv_error_set (err, 0, "DNS answer: two CNAMEs for %s", hv_dns_name_to_text (cur, t1));
            if (cname == NULL || ans[i].ttl < cname->ttl)
              cname = &ans[i];
          }
      if (cname == NULL)
        break;
      for (size_t k = 0; k < out->n_names; k++)
        if (hv_dns_name_equal (&out->names[k], cname->cname))
          return hv_error_set (err, 0, "DNS answer: CNAME loop at %s", hv_dns_name_to_text (cname->cname, t1));
      if (out->n_names == HV_DNS_MAX_CHAIN)
        return hv_error_set (err, 0, "DNS answer: CNAME chain from %s longer than %d names",
                             hv_dns_name_to_text (qname, t1), HV_DNS_MAX_CHAIN);
      if (cname->ttl < out->cname_ttl)
        out->cname_ttl = cname->ttl;
      out->names[out->n_names++] = *cname->cname;
    }
  const hv_dns_name *last = &out->names[out->n_names - 1];
  for (size_t i = 0; i < n; i++)
    {
      const hv_dns_rr *rr = &ans[i];
      if (rr->cls != HV_DNS_CLASS_IN || (rr->type != HV_DNS_TYPE_A && rr->type != HV_DNS_TYPE_AAAA)
          || !hv_dns_name_equal (&rr->name, last))
        continue;
      out->addrs = xrealloc (out->addrs, (out->n_addrs + 1) * sizeof (*out->addrs));
      hv_dns_address *a = &out->addrs[out->n_addrs++];
      memset (a, 0, sizeof (*a));
      a->ttl = rr->ttl;
      if (rr->type == HV_DNS_TYPE_A)
        {
          a->family = AF_INET;
          a->v4 = rr->a;
        }
      else
        {
          a->family = AF_INET6;
          a->v6 = rr->aaaa;
        }
    }
  return 0;
}

const char *
hv_dns_type_name (uint16_t qtype, char buf[16])
{
  static const struct
  {
    uint16_t type;
    const char *name;
  } names[] = {
    { 1, "A" },     { 2, "NS" },     { 5, "CNAME" }, { 6, "SOA" },   { 12, "PTR" },   { 15, "MX" },
    { 16, "TXT" },  { 28, "AAAA" },  { 33, "SRV" },  { 35, "NAPTR" }, { 43, "DS" },  { 48, "DNSKEY" },
    { 52, "TLSA" }, { 64, "SVCB" }, { 65, "HTTPS" }, { 99, "SPF" }, { 252, "AXFR" }, { 255, "ANY" },
    { 257, "CAA" },
  };
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    if (names[i].type == qtype)
      return names[i].name;
  snprintf (buf, 16, "TYPE%u", qtype);
  return buf;
}
