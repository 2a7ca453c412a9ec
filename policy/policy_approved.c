/* The approved file as a layer: policy_approved.h. */
#include "config.h"
#include "policy_approved.h"

#include <string.h>

#include "policy_network.h"
#include "utils.h"

/* The file is read as session/approvals.c writes it, line by line, and
 * nothing else is taken: comments, blank lines, "network:", "  allow:",
 * and `    - "NAME"` entries. */
int
hv_policy_merge_approved (hv_policy *p, const char *text, size_t len, const char *file, hv_error **err)
{
  if (p->net_mode != HV_NET_ALLOWLIST)
    return 0;
  hv_net_rules rules = { 0 };
  size_t line = 0;
  bool in_network = false, in_allow = false;
  for (const char *s = text, *end = text + len; s < end; line++)
    {
      const char *nl = memchr (s, '\n', (size_t) (end - s));
      size_t n = nl ? (size_t) (nl - s) : (size_t) (end - s);
      cleanup_free char *l = xasprintf ("%.*s", (int) n, s);
      s += n + (nl ? 1 : 0);
      const char *t = l + strspn (l, " ");
      if (t[0] == '\0' || t[0] == '#')
        continue;
      size_t indent = (size_t) (t - l);
      if (indent == 0 && strcmp (t, "network:") == 0 && !in_network)
        {
          in_network = true;
          continue;
        }
      if (indent == 2 && strcmp (t, "allow:") == 0 && in_network && !in_allow)
        {
          in_allow = true;
          continue;
        }
      size_t tl = strlen (t);
      if (in_allow && indent == 4 && tl > 4 && strncmp (t, "- \"", 3) == 0 && t[tl - 1] == '"')
        {
          cleanup_free char *entry = xasprintf ("%.*s", (int) (tl - 4), t + 3);
          cleanup_free char *where = xasprintf ("%s:%zu:%zu", file, line + 1, indent + 3);
          cleanup_free char *problem = NULL;
          size_t first = rules.n;
          if (strchr (entry, '"') || strchr (entry, '\\'))
            problem = xstrdup ("not a name");
          else if (hv_net_entry_parse (entry, false, where, &rules, &problem) == 0)
            for (size_t i = first; i < rules.n && problem == NULL; i++)
              if (rules.v[i].kind == HV_NET_RULE_CIDR)
                problem = xstrdup ("an address is never approved (only names are)");
          if (problem == NULL)
            continue;
          hv_net_rules_free (&rules);
          return hv_error_set (err, 0, "%s: approved names: \"%s\": %s", where, entry, problem);
        }
      hv_net_rules_free (&rules);
      return hv_error_set (err, 0,
                           "%s:%zu:%zu: approved names: not a line haven writes there (only `network:`, `  allow:` "
                           "and `    - \"NAME\"` lines, and comments)",
                           file, line + 1, indent + 1);
    }
  hv_net_rules_append (&p->net_allow, &rules);
  hv_net_rules_free (&rules);
  free (p->approved_file);
  p->approved_file = xstrdup (file);
  return 0;
}
