// What the webhook delivery tests share: their HTTPS receivers' certificate for 127.0.0.1 from a
// CA made here with the openssl CLI, the CA written to the stack's [webhooks] ca_file
// (scripts/stack.sh) so that cron/deliver trusts it (each file that runs a receiver calls
// makeCerts() once); the devchain's tokens as ethers Contracts of the deployer.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract } from 'ethers';
import { env } from './helpers.mjs';

export function makeCerts() {
  const dir = mkdtempSync(join(tmpdir(), 'bp-wh-ca-'));
  const ossl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ossl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Blockport webhook test CA');
  ossl('req', ...ec, '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n');
  ossl('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'srv.pem', '-days', '2', '-extfile', 'ext.cnf');
  // The stack's ca_file: replaced whole, so the worker never reads half a file.
  const ca = `${env.dir}/webhook-ca.pem`;
  writeFileSync(`${ca}.tmp`, readFileSync(join(dir, 'ca.pem')));
  renameSync(`${ca}.tmp`, ca);
  return { key: readFileSync(join(dir, 'srv.key')), cert: readFileSync(join(dir, 'srv.pem')) };
}

// The devchain's ERC-20 (18 decimals), ERC-721 and ERC-1155 (devchain.json), signed by signer.
export function tokens(dc, signer) {
  return {
    erc20: new Contract(dc.tokens.erc20_18, [
      'function mint(address to, uint256 amount)',
      'function transfer(address to, uint256 amount) returns (bool)',
    ], signer),
    erc721: new Contract(dc.tokens.erc721, [
      'function mint(address to)',
      'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
    ], signer),
    erc1155: new Contract(dc.tokens.erc1155, [
      'function mintBatch(address to, uint256[] ids, uint256[] amounts, bytes data)',
    ], signer),
  };
}
