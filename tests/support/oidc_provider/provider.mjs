// A real OpenID provider (panva/oidc-provider, OpenID Certified) for Casefile's single sign-on
// tests. It listens on loopback only and keeps everything in memory.
//
//   node provider.mjs <port>
//
// Environment:
//   OIDC_PORT            the port, when not given as the first argument
//   OIDC_CLIENT_ID       the one confidential client (default casefile)
//   OIDC_CLIENT_SECRET   its secret (client_secret_basic or client_secret_post)
//   OIDC_REDIRECT_URIS   its redirect URIs, space-separated (Casefile's callback)
//   OIDC_RESOURCE        the API's resource indicator = `aud` of its JWT access tokens
//                        (default urn:casefile:api); `urn:other:api` exists as a second API
//   OIDC_JWKS            the signing keys, a private JWK set (JSON); the first key of an
//                        algorithm signs. Default: a fresh RSA key.
//
// Test users sign in at /interaction/<uid> with email and password (the form posts to
// /interaction/<uid>/login). `GET /_test/stats` counts the requests to the JWKS endpoint, so a
// test can see how often Casefile fetched the keys.

import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { argv, env, exit } from 'node:process';

import Provider from 'oidc-provider';

const port = Number(argv[2] || env.OIDC_PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node provider.mjs <port>');
  exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const clientId = env.OIDC_CLIENT_ID || 'casefile';
const clientSecret = env.OIDC_CLIENT_SECRET || 'casefile-test-client-secret-0123456789';
const redirectUris = (env.OIDC_REDIRECT_URIS || 'http://127.0.0.1:8000/api/v1/auth/oauth/callback')
  .split(/\s+/).filter(Boolean);
const casefileResource = env.OIDC_RESOURCE || 'urn:casefile:api';
const otherResource = 'urn:other:api';

function defaultJwks() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' }] };
}
const jwks = env.OIDC_JWKS ? JSON.parse(env.OIDC_JWKS) : defaultJwks();

// The test users, by account id. Casefile matches them by email.
const USERS = {
  'u-alice': { email: 'alice@sso.test', name: 'Alice Newcomer', password: 'alice-password' },
  'u-bob': { email: 'Bob.Stone@Firm.Test', name: 'Bob Stone', password: 'bob-password' },
  'u-carol': { email: 'carol@sso.test', name: 'Carol Leaver', password: 'carol-password' },
  'u-dave': { email: 'dave@sso.test', name: 'Dave Bearer', password: 'dave-password' },
  'u-erin': { email: 'erin@sso.test', name: 'Erin Rotation', password: 'erin-password' },
  'u-frank': { email: 'frank@sso.test', name: 'Frank State', password: 'frank-password' },
  'u-mallory': {
    email: 'admin@casefile.test', name: 'Mallory', password: 'mallory-password', emailVerified: false,
  },
};

function accountByEmail(email) {
  const wanted = String(email || '').trim().toLowerCase();
  return Object.entries(USERS).find(([, user]) => user.email.toLowerCase() === wanted);
}

const configuration = {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: redirectUris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
  // PKCE for every authorization request, confidential client or not (only S256 is offered).
  pkce: { required: () => true },
  jwks,
  cookies: { keys: ['casefile-test-provider-cookie-key'] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
  },
  // Email in the ID token even though an access token is issued too.
  conformIdTokenClaims: false,
  async findAccount(_ctx, accountId) {
    const user = USERS[accountId];
    if (!user) return undefined;
    return {
      accountId,
      async claims() {
        return {
          sub: accountId,
          email: user.email,
          email_verified: user.emailVerified ?? true,
          name: user.name,
        };
      },
    };
  },
  // The email goes into the JWT access tokens as well: the API matches its users by it.
  async extraTokenClaims(_ctx, token) {
    const user = USERS[token.accountId];
    return user ? { email: user.email, email_verified: user.emailVerified ?? true } : undefined;
  },
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      // An authorization request without `resource` is for the Casefile API, and the token
      // request then gets a JWT access token for it (not an opaque token for userinfo).
      defaultResource: () => casefileResource,
      useGrantedResource: () => true,
      getResourceServerInfo(_ctx, resourceIndicator) {
        if (resourceIndicator !== casefileResource && resourceIndicator !== otherResource) {
          throw new Provider.errors.InvalidTarget();
        }
        return {
          scope: 'cases',
          audience: resourceIndicator,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 600,
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
};

const provider = new Provider(issuer, configuration);
const oidc = provider.callback();
const stats = { jwks_requests: 0 };

function page(res, status, html) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><body>${html}</body></html>`);
}

function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginForm(res, uid, status = 200, message = '') {
  page(res, status, `
    <h1>Sign in to the test provider</h1>
    ${message ? `<p class="error">${escapeHtml(message)}</p>` : ''}
    <form method="post" action="/interaction/${escapeHtml(uid)}/login">
      <input name="email" type="email"> <input name="password" type="password">
      <button type="submit">Sign in</button>
    </form>`);
}

// The interaction: sign-in and consent in one step (a test provider has nothing to ask).
async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) {
    page(res, 400, 'interaction mismatch');
    return;
  }
  if (req.method === 'GET' && !action) {
    loginForm(res, uid);
    return;
  }
  if (req.method !== 'POST' || action !== 'login') {
    page(res, 404, 'not found');
    return;
  }
  const form = await readForm(req);
  const found = accountByEmail(form.get('email'));
  if (!found || found[1].password !== form.get('password')) {
    loginForm(res, uid, 401, 'Wrong email or password');
    return;
  }
  const [accountId] = found;
  const { params, prompt } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: params.client_id });
  grant.addOIDCScope(String(params.scope || 'openid'));
  const missing = prompt.details?.missingResourceScopes || {};
  for (const [indicator, scopes] of Object.entries(missing)) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(
    req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false },
  );
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url, issuer);
    if (url.pathname === '/_test/stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(stats));
      return;
    }
    const match = url.pathname.match(/^\/interaction\/([^/]+)(?:\/([a-z]+))?$/);
    if (match) {
      await interaction(req, res, match[1], match[2]);
      return;
    }
    if (url.pathname === '/jwks') stats.jwks_requests += 1;
    oidc(req, res);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) page(res, 500, escapeHtml(error.message));
  }
});

server.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => exit(0)));
}
