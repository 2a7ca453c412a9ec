#!/usr/bin/env python3
"""A Kubernetes API server's discovery documents, and nothing else.

    kube_discovery.py PORT_FILE

kubectl maps each manifest's apiVersion and kind to a resource (its
plural name, namespaced or not) through discovery before anything else,
even for `kubectl apply --dry-run=client`; there is no cluster here.
This serves the legacy discovery documents (/api, /api/v1, /apis,
/apis/GROUP/VERSION) for the kinds deploy/kubernetes uses, with the
names, scopes and verbs of Kubernetes 1.32's API (and of the
agents.x-k8s.io/v1alpha1 Sandbox of kubernetes-sigs/agent-sandbox's
CRD), written here by hand.  Every other path is 404, so a kind or an
apiVersion not listed here fails kubectl's mapping.  It listens on a
free port of 127.0.0.1, written to PORT_FILE once it accepts, and logs
each request's path on stderr.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]

# group/version -> [(plural, kind, namespaced)]
RESOURCES = {
    "v1": [("namespaces", "Namespace", False), ("serviceaccounts", "ServiceAccount", True),
           ("secrets", "Secret", True), ("pods", "Pod", True), ("nodes", "Node", False),
           ("configmaps", "ConfigMap", True)],
    "apps/v1": [("daemonsets", "DaemonSet", True), ("deployments", "Deployment", True)],
    "rbac.authorization.k8s.io/v1": [("clusterroles", "ClusterRole", False),
                                     ("clusterrolebindings", "ClusterRoleBinding", False),
                                     ("roles", "Role", True), ("rolebindings", "RoleBinding", True)],
    "node.k8s.io/v1": [("runtimeclasses", "RuntimeClass", False)],
    "agents.x-k8s.io/v1alpha1": [("sandboxes", "Sandbox", True)],
}


def resource_list(gv):
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
            "resources": [{"name": p, "singularName": k.lower(), "namespaced": ns, "kind": k, "verbs": VERBS}
                          for p, k, ns in RESOURCES[gv]]}


def documents():
    docs = {"/api": {"kind": "APIVersions", "versions": ["v1"],
                     "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:443"}]},
            "/api/v1": resource_list("v1")}
    groups = []
    for gv in RESOURCES:
        if "/" not in gv:
            continue
        group, version = gv.split("/")
        entry = {"groupVersion": gv, "version": version}
        groups.append({"name": group, "versions": [entry], "preferredVersion": entry})
        docs["/apis/" + gv] = resource_list(gv)
    docs["/apis"] = {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    return docs


class Handler(BaseHTTPRequestHandler):
    docs = documents()

    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        sys.stderr.write("GET %s\n" % self.path)
        doc = self.docs.get(path)
        body = json.dumps(doc if doc is not None else
                          {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                           "code": 404, "message": "not served by the test's discovery server"}).encode()
        self.send_response(200 if doc is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    server = HTTPServer(("127.0.0.1", 0), Handler)
    tmp = sys.argv[1] + ".new"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
