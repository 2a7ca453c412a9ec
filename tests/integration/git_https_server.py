#!/usr/bin/env python3
"""A git server over https for the credential broker's tests.

    git_https_server.py ADDR CERT KEY ROOT USER TOKEN READY_FILE

Serves the bare repositories under ROOT with `git http-backend` (smart
HTTP: clone, fetch, push) on ADDR port 443, TLS with CERT and KEY, and
answers 401 to every request whose Basic credentials are not USER:TOKEN.
Each request is logged on stderr as "METHOD PATH AUTH" (AUTH: ok, none or
bad; never the credentials).  Writes READY_FILE once it listens; runs
until killed.
"""
import base64
import http.server
import os
import ssl
import subprocess
import sys


def main():
    addr, cert, key, root, user, token, ready = sys.argv[1:8]
    want = "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def serve(self):
            got = self.headers.get("Authorization")
            auth = "none" if got is None else ("ok" if got == want else "bad")
            sys.stderr.write(f"{self.command} {self.path} {auth}\n")
            sys.stderr.flush()
            if auth != "ok":
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="haven-test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path, _, query = self.path.partition("?")
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GIT_PROJECT_ROOT": root,
                "GIT_HTTP_EXPORT_ALL": "1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": user,
                "REMOTE_ADDR": self.client_address[0],
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            }
            out = subprocess.run(["git", "http-backend"], input=body, env=env,
                                 capture_output=True, check=False).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            if not _:
                head, _, payload = out.partition(b"\n\n")
            status = 200
            headers = []
            for line in head.decode("latin-1").splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = serve
        do_POST = serve

    server = http.server.ThreadingHTTPServer((addr, 443), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(ready, "w") as f:
        f.write("ready\n")
    server.serve_forever()


if __name__ == "__main__":
    main()
