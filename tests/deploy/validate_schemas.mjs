// Validate Kubernetes objects against the API's own schemas, and find
// fields the schemas do not have.
//
//   node validate_schemas.mjs OBJECTS.json   (with NODE_PATH unused: run
//   from a directory whose node_modules holds kubernetes-models)
//
// OBJECTS.json: [{"where": "FILE#N", "object": {...}}, ...] (check-manifests.sh
// turns the YAML into it).  The schemas are those of the npm package
// kubernetes-models (generated from Kubernetes' OpenAPI document, as
// compiled validators): types, enums, required fields.  Those validators
// accept a field the schema does not declare, as an API server's
// non-strict decoding drops it; a misspelt field would then be lost
// without a word.  So each object is validated through a Proxy that
// records every property the validator reads, or whose keys it lists (a
// map): a field of the object never read is one the schema does not have.
// A Sandbox (agents.x-k8s.io/v1alpha1, a CRD) is checked as what its
// CRD declares: metadata, and spec.podTemplate whose spec is a PodSpec
// and whose metadata has only labels and annotations.
// Prints one line per problem; exits 1 if there is any.
import fs from "node:fs";

const SCHEMAS = {
  "v1/Namespace": "IoK8sApiCoreV1Namespace",
  "v1/ServiceAccount": "IoK8sApiCoreV1ServiceAccount",
  "v1/Secret": "IoK8sApiCoreV1Secret",
  "v1/Pod": "IoK8sApiCoreV1Pod",
  "apps/v1/DaemonSet": "IoK8sApiAppsV1DaemonSet",
  "rbac.authorization.k8s.io/v1/ClusterRole": "IoK8sApiRbacV1ClusterRole",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "IoK8sApiRbacV1ClusterRoleBinding",
  "node.k8s.io/v1/RuntimeClass": "IoK8sApiNodeV1RuntimeClass",
};

async function validator(name) {
  const pkg = name.startsWith("IoK8sApimachinery") ? "@kubernetes-models/apimachinery" : "kubernetes-models";
  const m = await import(`${pkg}/_schemas/${name}`);
  return m.validate;
}

// track(value, path, seen): value seen through a Proxy that adds to seen
// "PATH/KEY" for each key read and "PATH/*" when its keys are listed.
function track(value, path, seen) {
  if (value === null || typeof value !== "object") return value;
  return new Proxy(value, {
    get(t, k, r) {
      const v = Reflect.get(t, k, r);
      if (typeof k !== "string") return v;
      seen.add(`${path}/${k}`);
      return track(v, `${path}/${k}`, seen);
    },
    has(t, k) {
      if (typeof k === "string") seen.add(`${path}/${k}`);
      return Reflect.has(t, k);
    },
    ownKeys(t) {
      seen.add(`${path}/*`);
      return Reflect.ownKeys(t);
    },
  });
}

// The fields of value that the validator never looked at.
function unread(value, path, seen, out) {
  if (value === null || typeof value !== "object") return;
  for (const k of Object.keys(value)) {
    const p = `${path}/${k}`;
    if (!Array.isArray(value) && !seen.has(p) && !seen.has(`${path}/*`)) out.push(p);
    else unread(value[k], p, seen, out);
  }
}

// check(validate, object, prefix): the problems, as "PATH: message".
function check(validate, object, prefix) {
  const seen = new Set();
  const problems = [];
  if (!validate(track(object, "", seen))) {
    for (const e of validate.errors) problems.push(`${prefix}${e.instancePath || "/"}: ${e.message || e.keyword} ${JSON.stringify(e.params)}`);
  }
  const extra = [];
  unread(object, "", seen, extra);
  for (const p of extra) problems.push(`${prefix}${p}: no such field in the schema`);
  return problems;
}

async function checkSandbox(o) {
  const problems = [];
  const allowed = { "": ["apiVersion", "kind", "metadata", "spec"],
                    "/spec": ["podTemplate", "volumeClaimTemplates", "shutdownTime", "shutdownPolicy", "replicas", "service"],
                    "/spec/podTemplate": ["metadata", "spec"],
                    "/spec/podTemplate/metadata": ["labels", "annotations"] };
  for (const [p, keys] of Object.entries(allowed)) {
    const v = p.split("/").slice(1).reduce((a, k) => (a == null ? a : a[k]), o);
    if (v == null) continue;
    for (const k of Object.keys(v)) if (!keys.includes(k)) problems.push(`${p}/${k}: no such field in the Sandbox CRD`);
  }
  if (!o.spec || !o.spec.podTemplate || !o.spec.podTemplate.spec) problems.push("/spec/podTemplate/spec: required");
  else problems.push(...check(await validator("IoK8sApiCoreV1PodSpec"), o.spec.podTemplate.spec, "/spec/podTemplate/spec"));
  if (o.metadata) problems.push(...check(await validator("IoK8sApimachineryPkgApisMetaV1ObjectMeta"), o.metadata, "/metadata"));
  return problems;
}

const objects = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
let bad = 0;
for (const { where, object } of objects) {
  const key = `${object.apiVersion}/${object.kind}`;
  let problems;
  if (key === "agents.x-k8s.io/v1alpha1/Sandbox") problems = await checkSandbox(object);
  else if (SCHEMAS[key]) problems = check(await validator(SCHEMAS[key]), object, "");
  else problems = [`: ${key} is not a kind this check knows`];
  for (const p of problems) console.log(`${where} (${key})${p}`);
  bad += problems.length;
}
console.log(`${objects.length} objects checked against the schemas, ${bad} problems`);
process.exit(bad ? 1 : 0);
