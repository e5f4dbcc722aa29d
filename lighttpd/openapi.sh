#!/bin/sh
# Prints the lighttpd block that serves the API description at GET /v1/openapi.yaml as a static
# file, without a key: docs/openapi.yaml in the source tree, or openapi.yaml next to this
# directory once installed (make install). Nothing when neither is there (the path is then a 404
# of the fallback program, like any unknown path).
# lighttpd runs this through include_shell when it reads lighttpd/blockport.conf.
set -eu
here=${BLOCKPORT_LIGHTTPD_DIR:?}
for f in "$here/../docs/openapi.yaml" "$here/../openapi.yaml"; do
	[ -f "$f" ] || continue
	# fastcgi.server is emptied for this one URL, so the fallback program's "/" does not take it.
	cat <<EOT
server.modules += ( "mod_alias" )
\$HTTP["url"] == "/v1/openapi.yaml" {
	fastcgi.server = ()
	alias.url = ( "/v1/openapi.yaml" => "$(cd "$(dirname "$f")" && pwd)/openapi.yaml" )
	mimetype.assign = ( "" => "application/yaml" )
}
EOT
	exit 0
done
