"""A web server and its client in one process over loopback: 300 GETs, each
on a new connection (connect, accept, request, response, close).  Under moat
the connects are decided by the supervisor and the rest runs in the kernel
of the sandbox's own network namespace."""
import http.client
import http.server
import threading


class Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b"x" * 1024
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


srv = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
threading.Thread(target=srv.serve_forever, daemon=True).start()
port = srv.server_address[1]
for _ in range(300):
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", "/")
    assert len(c.getresponse().read()) == 1024
    c.close()
