#!/usr/bin/env python3
"""What the haven manifests must say, read from the YAML itself.

    check_fields.py SRCDIR OBJECTS_JSON

Parses every deploy/kubernetes/*.yaml and examples/*.yaml (YAML errors,
an empty document, an object without apiVersion, kind or a name fail),
writes them to OBJECTS_JSON for the schema check, and checks the ties
between them and the rest of haven that no schema knows: a RuntimeClass
per shipped policy whose handler is the name node-installer.sh registers
(haven-POLICY), selecting the label the installer sets, with a pod
overhead; the DaemonSet runs the installer script the image carries, as
a privileged pod in the host's pid namespace, with the node's / at
HOST_ROOT and NODE_NAME from the pod's node, under a service account
that a ClusterRole binding lets patch nodes; each example pod names a
RuntimeClass that exists, mounts no service-account token, and takes the
API key from a Secret under a name the policy passes.  Prints "FAIL: ..."
per problem and exits 1 if any.
"""
import glob
import json
import os
import re
import sys

import yaml

src, out_json = sys.argv[1], sys.argv[2]
kdir = os.path.join(src, "deploy", "kubernetes")
problems = []


def fail(msg):
    problems.append(msg)


def get(obj, *path):
    for p in path:
        if isinstance(obj, dict):
            obj = obj.get(p)
        elif isinstance(obj, list) and isinstance(p, int) and p < len(obj):
            obj = obj[p]
        else:
            return None
    return obj


objects = []
files = sorted(glob.glob(os.path.join(kdir, "*.yaml"))) + sorted(glob.glob(os.path.join(kdir, "examples", "*.yaml")))
if not files:
    fail("no manifests in %s" % kdir)
for f in files:
    rel = os.path.relpath(f, src)
    try:
        docs = list(yaml.safe_load_all(open(f)))
    except yaml.YAMLError as e:
        fail("%s: not YAML: %s" % (rel, e))
        continue
    for i, d in enumerate(docs, 1):
        where = "%s#%d" % (rel, i)
        if d is None:
            fail("%s: an empty document" % where)
            continue
        if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind") or not get(d, "metadata", "name"):
            fail("%s: not an object with apiVersion, kind and metadata.name" % where)
            continue
        objects.append({"where": where, "file": rel, "object": d})
json.dump([{"where": o["where"], "object": o["object"]} for o in objects], open(out_json, "w"))


def of_kind(kind, examples=None):
    return [o for o in objects if o["object"]["kind"] == kind
            and (examples is None or ("/examples/" in o["file"]) == examples)]


# The installer's own names, read from the script (not repeated here).
script = open(os.path.join(kdir, "node-installer.sh")).read()
label = re.search(r'^HAVEN_NODE_LABEL=\$\{HAVEN_NODE_LABEL:-([^}]+)\}', script, re.M).group(1)
if "label_node '\"ready\"'" not in script:
    fail("node-installer.sh no longer sets the label to \"ready\"")
if '--name "haven-$p"' not in script:
    fail("node-installer.sh no longer names its handlers haven-POLICY")

# RuntimeClasses: one per shipped policy, nothing else.
policies = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(src, "policies", "*.yaml")))
rcs = {}
for o in of_kind("RuntimeClass"):
    rc, w = o["object"], o["where"]
    name = rc["metadata"]["name"]
    rcs[name] = rc
    if rc.get("apiVersion") != "node.k8s.io/v1":
        fail("%s: RuntimeClass %s: apiVersion %s, not node.k8s.io/v1" % (w, name, rc.get("apiVersion")))
    if rc.get("handler") != name:
        fail("%s: RuntimeClass %s has handler %r: the installer registers the handler under the class's name" % (w, name, rc.get("handler")))
    if not name.startswith("haven-") or name[len("haven-"):] not in policies:
        fail("%s: RuntimeClass %s: no shipped policy %s" % (w, name, name[len("haven-"):]))
    if get(rc, "scheduling", "nodeSelector") != {label: "ready"}:
        fail("%s: RuntimeClass %s: nodeSelector %r, not {%s: ready}" % (w, name, get(rc, "scheduling", "nodeSelector"), label))
    pf = get(rc, "overhead", "podFixed") or {}
    if not re.fullmatch(r"[0-9]+Mi", str(pf.get("memory", ""))) or not re.fullmatch(r"[0-9]+m", str(pf.get("cpu", ""))):
        fail("%s: RuntimeClass %s: overhead.podFixed needs memory (Mi) and cpu (m): %r" % (w, name, pf))
for p in policies:
    if "haven-" + p not in rcs:
        fail("no RuntimeClass haven-%s for the shipped policy %s" % (p, p))

# The DaemonSet.
ds = of_kind("DaemonSet")
if len(ds) != 1:
    fail("%d DaemonSets, not one" % len(ds))
else:
    d, w = ds[0]["object"], ds[0]["where"]
    ns = d["metadata"].get("namespace")
    pod = get(d, "spec", "template", "spec") or {}
    if get(d, "spec", "selector", "matchLabels") != {k: v for k, v in (get(d, "spec", "template", "metadata", "labels") or {}).items()
                                                     if k in (get(d, "spec", "selector", "matchLabels") or {})} \
            or not get(d, "spec", "selector", "matchLabels"):
        fail("%s: the selector does not match the template's labels" % w)
    if pod.get("hostPID") is not True:
        fail("%s: hostPID must be true (the restart enters pid 1's namespaces)" % w)
    c = get(pod, "containers", 0) or {}
    if get(c, "securityContext", "privileged") is not True:
        fail("%s: the installer container must be privileged" % w)
    if c.get("command") != ["/opt/haven-installer/node-installer.sh", "run"]:
        fail("%s: command %r, not the image's installer with run" % (w, c.get("command")))
    env = {e["name"]: e for e in c.get("env", [])}
    if get(env, "NODE_NAME", "valueFrom", "fieldRef", "fieldPath") != "spec.nodeName":
        fail("%s: NODE_NAME must come from spec.nodeName" % w)
    host_root = get(env, "HOST_ROOT", "value") or "/host"
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = [m for m in c.get("volumeMounts", []) if m.get("mountPath") == host_root]
    if len(mounts) != 1 or get(vols, mounts[0]["name"], "hostPath", "path") != "/":
        fail("%s: the node's / must be mounted at HOST_ROOT %s" % (w, host_root))
    if (pod.get("terminationGracePeriodSeconds") or 30) < 60:
        fail("%s: terminationGracePeriodSeconds under 60 leaves the uninstall too little time" % w)
    sa = pod.get("serviceAccountName")
    # The service account exists in the DaemonSet's namespace and may patch nodes.
    if not [o for o in of_kind("ServiceAccount") if o["object"]["metadata"]["name"] == sa
            and o["object"]["metadata"].get("namespace") == ns]:
        fail("%s: no ServiceAccount %s in namespace %s" % (w, sa, ns))
    roles = {o["object"]["metadata"]["name"]: o["object"] for o in of_kind("ClusterRole")}
    ok = False
    for b in of_kind("ClusterRoleBinding"):
        b = b["object"]
        if not any(s.get("kind") == "ServiceAccount" and s.get("name") == sa and s.get("namespace") == ns
                   for s in b.get("subjects", [])):
            continue
        role = roles.get(get(b, "roleRef", "name")) if get(b, "roleRef", "kind") == "ClusterRole" else None
        for r in (role or {}).get("rules", []):
            if "" in r.get("apiGroups", []) and "nodes" in r.get("resources", []) and "patch" in r.get("verbs", []):
                ok = True
    if not ok:
        fail("%s: no ClusterRole bound to %s/%s lets it patch nodes" % (w, ns, sa))
    if not [o for o in of_kind("Namespace") if o["object"]["metadata"]["name"] == ns]:
        fail("%s: namespace %s is not among the manifests" % (w, ns))

# The examples: a pod and a Sandbox under a haven RuntimeClass.
examples = of_kind("Pod", True) + of_kind("Sandbox", True)
if not of_kind("Pod", True) or not of_kind("Sandbox", True):
    fail("the examples need a Pod and an agent-sandbox Sandbox")
for o in examples:
    x, w = o["object"], o["where"]
    spec = get(x, "spec", "podTemplate", "spec") if x["kind"] == "Sandbox" else x.get("spec")
    if x["kind"] == "Sandbox" and x.get("apiVersion") != "agents.x-k8s.io/v1alpha1":
        fail("%s: Sandbox apiVersion %s" % (w, x.get("apiVersion")))
    rc = (spec or {}).get("runtimeClassName")
    if rc not in rcs:
        fail("%s: runtimeClassName %r is not one of deploy/kubernetes's RuntimeClasses" % (w, rc))
        continue
    if spec.get("automountServiceAccountToken") is not False:
        fail("%s: automountServiceAccountToken must be false" % w)
    policy = yaml.safe_load(open(os.path.join(src, "policies", rc[len("haven-"):] + ".yaml")))
    passed = get(policy, "env", "pass") or []
    for c in spec.get("containers", []):
        for e in c.get("env", []):
            ref = get(e, "valueFrom", "secretKeyRef")
            if e.get("value") and re.search(r"KEY|TOKEN", e["name"]):
                fail("%s: %s is written into the manifest: take it from a Secret" % (w, e["name"]))
            if ref and e["name"] not in passed:
                fail("%s: %s from Secret %s: policy %s does not pass it (env.pass)" % (w, e["name"], ref.get("name"), rc))

for p in problems:
    print("FAIL: " + p)
print("%d objects in %d files, %d problems" % (len(objects), len(files), len(problems)))
sys.exit(1 if problems else 0)
