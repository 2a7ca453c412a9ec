/* A reader of TOML files' statements, for editing container engines'
 * configuration without rewriting it: each table header, key/value line
 * and whole-line comment is reported with its line and byte span, so that
 * an editor can add or take out whole lines and leave every other byte as
 * it was.  Values are skipped by their syntax (strings of the four kinds,
 * arrays over several lines, inline tables), not interpreted: the reader
 * tells where things are, the engine that reads the file judges them.
 * Malformed statements are errors naming FILE:LINE. */
#ifndef HAVEN_TOML_SCAN_H
#define HAVEN_TOML_SCAN_H

#include <stddef.h>

#include "error.h"

/* Deeper keys than any engine configuration has are refused. */
#define HV_TOML_MAX_DEPTH 16

enum hv_toml_kind
{
  HV_TOML_COMMENT,     /* a line holding only a comment */
  HV_TOML_TABLE,       /* [a.b] */
  HV_TOML_ARRAY_TABLE, /* [[a.b]] */
  HV_TOML_KEYVAL,      /* a.b = value */
};

enum hv_toml_value
{
  HV_TOML_V_NONE, /* not a key/value */
  HV_TOML_V_STRING,
  HV_TOML_V_ARRAY,
  HV_TOML_V_INLINE_TABLE,
  HV_TOML_V_OTHER, /* number, boolean, date */
};

struct hv_toml_item
{
  enum hv_toml_kind kind;
  unsigned line;      /* 1-based, of the statement's first line */
  size_t start, end;  /* bytes: from the line's start to after its newline */
  /* A table: its key.  A key/value: the key with the current table's
   * key before it (table_depth components), decoded. */
  char *path[HV_TOML_MAX_DEPTH];
  size_t depth;
  size_t table_depth;
  enum hv_toml_value value_kind;
  char *value;   /* the value as written (strings with their quotes) */
  char *comment; /* HV_TOML_COMMENT: the line without its newline */
};

struct hv_toml_doc
{
  struct hv_toml_item *items;
  size_t n;
};

/* Every statement of text, in order.  path names the file in messages. */
int hv_toml_scan (const char *text, const char *path, struct hv_toml_doc *doc, hv_error **err);
void hv_toml_doc_free (struct hv_toml_doc *doc);
#define cleanup_toml_doc __attribute__ ((cleanup (hv_toml_doc_free)))

/* A TOML basic string of s, with its quotes. */
char *hv_toml_string (const char *s);
/* s as a key: bare when it can be, else a basic string. */
char *hv_toml_key (const char *s);
#endif
