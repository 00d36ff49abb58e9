// A real OpenID Provider (the `oidc-provider` package) on loopback for the
// SSO and CI token-exchange tests. Usage: node server.mjs PORT REDIRECT_URI
// with OIDC_PROVIDER_DIR naming the folder whose node_modules holds it.
// Accounts log in through the provider's development interactions (any
// password); consent is granted up front so a test needs no browser.
// OIDC_CLOCK_OFFSET_SECONDS moves this provider's clock (to issue tokens
// that are already expired).
const offset = Number(process.env.OIDC_CLOCK_OFFSET_SECONDS || 0) * 1000;
if (offset) {
  const realNow = Date.now;
  Date.now = () => realNow() + offset;
}
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { default: Provider } = await import(
  pathToFileURL(join(process.env.OIDC_PROVIDER_DIR, 'node_modules/oidc-provider/lib/index.js')).href
);

const [port, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;

const accounts = {
  'alice@acme.test': { email: 'alice@acme.test', email_verified: true, name: 'Alice Acme' },
  'bob@acme.test': { email: 'bob@acme.test', email_verified: true, name: 'Bob Acme' },
  'unverified@acme.test': { email: 'unverified@acme.test', email_verified: false, name: 'Unverified' },
  'mallory@evil.test': { email: 'mallory@evil.test', email_verified: true, name: 'Mallory' },
  'ci-main': { repository: 'acme/web', ref: 'refs/heads/main', environment: 'production' },
  'ci-branch': { repository: 'acme/web', ref: 'refs/heads/feature', environment: 'preview' },
};

const client = (client_id, extra = {}) => ({
  client_id,
  client_secret: `${client_id}-secret`,
  redirect_uris: [redirectUri],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  ...extra,
});

const provider = new Provider(issuer, {
  clients: [client('moke-sso'), client('moke-ci'), client('other-ci')],
  conformIdTokenClaims: false,
  scopes: ['openid', 'email', 'profile', 'ci'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
    ci: ['repository', 'ref', 'environment', 'jti'],
  },
  pkce: { required: () => true },
  findAccount: async (ctx, id) => {
    // Any other address is a verified person: the provider vouches for
    // whatever its operator wants (as a hostile tenant's provider would).
    const account = accounts[id] ?? (id.includes('@') ? { email: id, email_verified: true, name: id } : undefined);
    if (!account) return undefined;
    return {
      accountId: id,
      // A CI system gives every job token its own jti.
      claims: async () => ({ sub: id, ...account, ...(account.repository ? { jti: randomUUID() } : {}) }),
    };
  },
  loadExistingGrant: async (ctx) => {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile ci');
    grant.addOIDCClaims(['email', 'email_verified', 'name', 'repository', 'ref', 'environment', 'jti']);
    await grant.save();
    return grant;
  },
});
provider.proxy = false;
provider.on('server_error', (ctx, error) => console.error('server_error', error));
provider.listen(Number(port), '127.0.0.1', () => console.log(`ready ${issuer}`));
