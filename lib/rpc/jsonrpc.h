/*
 * JSON-RPC 2.0 as Blockport speaks it (SPEC.md sections 2 and 4, DESIGN.md; docs/rpc.md), in
 * one module per concern:
 *
 *  - lib/rpc/rpc_scan.h      strict JSON scanning, and the small scanners of node answers;
 *  - lib/rpc/rpc_envelope.h  the envelope scanner of untrusted request bodies, and error objects;
 *  - lib/rpc/rpc_methods.h   method tables (one per program): classes, compute units, block args;
 *  - lib/rpc/rpc_client.h    the client of workers and programs (bp_rpc_client_call, _batch, ...);
 *  - lib/rpc/rpc_proxy.h     the proxy pipeline that the HTTP and WebSocket programs share.
 *
 * This header includes the first four, for code that uses several of them.
 */
#ifndef BP_JSONRPC_H
#define BP_JSONRPC_H

#include "rpc_client.h"
#include "rpc_envelope.h"
#include "rpc_methods.h"
#include "rpc_scan.h"

#endif
