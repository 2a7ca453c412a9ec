# A stand-in for a model API's host, for the gateway's engine test: HTTPS
# with a certificate of the test's own CA, one JSON answer to any request,
# and one line per request in a log: method, path and the credential
# headers as they arrived (the test looks for the real key there, and
# only there).
import http.server
import json
import ssl
import sys

addr, port, cert, key, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        with open(log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "x-api-key": self.headers.get("x-api-key"),
                                "authorization": self.headers.get("authorization")}) + "\n")
        body = b'{"type":"message","content":[{"type":"text","text":"stand-in answer"}]}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = answer

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer((addr, port), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
open(log + ".ready", "w").close()
server.serve_forever()
