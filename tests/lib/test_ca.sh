# make_test_ca DIR SAN: a CA made for the test (DIR/ca.pem, DIR/ca.key)
# and a server certificate it signed for SAN, openssl's subjectAltName
# ("DNS:api.anthropic.com", "IP:127.1.2.3"): DIR/srv.pem, DIR/srv.key.
# Fails (non-zero, openssl's messages dropped) naming nothing: callers say
# what failed.  Sourced by tests that serve a stand-in over HTTPS.
make_test_ca() {
  local d=$1 san=$2
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$d/ca.key" -out "$d/ca.pem" -days 1 -subj /CN=haven-test-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2> /dev/null || return 1
  openssl req "${ec[@]}" -keyout "$d/srv.key" -out "$d/srv.csr" -subj "/CN=${san#*:}" 2> /dev/null || return 1
  printf 'subjectAltName=%s\n' "$san" > "$d/srv.ext"
  openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -out "$d/srv.pem" -days 1 \
    -extfile "$d/srv.ext" 2> /dev/null
}
