# The stand-in model API (tests/agents/mock_model_api.py, its scripted
# answers and its log) served over HTTPS with a certificate of the test's
# own CA, as the gateway's engine tests need a provider's host to be:
#
#   standin.py MOCK.py SCRIPT.json LOG.jsonl READY ADDR PORT CERT KEY
#
# MOCK_DUMP=1 in the environment makes the mock log each request's
# headers, so a test can see the credential that arrived.
import importlib.util
import json
import ssl
import sys

mock_path, script, log, ready, addr, port, cert, key = sys.argv[1:9]
spec = importlib.util.spec_from_file_location("mock_model_api", mock_path)
mock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mock)
with open(script) as f:
    mock.script = json.load(f)
mock.log_path = log


class Server(mock.ThreadingHTTPServer):
    daemon_threads = True


srv = Server((addr, int(port)), mock.Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(ready, "w").close()
srv.serve_forever()
