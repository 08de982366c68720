// Token-surface helpers: a funded account with tokens of chosen scopes, and calls with them.

import type { LightMyRequestResponse } from 'fastify';
import { createAccount, freshIp } from './factories.ts';
import type { TestApp } from './harness.ts';

export interface ApiClient {
  accountId: number;
  email: string;
  secret: string;
  call(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

export async function apiClient(
  t: TestApp,
  scopes: string[] = ['*'],
  funds = '10000',
  accountId?: number,
): Promise<ApiClient> {
  let id = accountId;
  let email = '';
  if (id === undefined) {
    const { account } = await createAccount(t);
    id = account.id;
    email = account.email;
    if (funds !== '0') await t.deps.wallet.credit(id, funds, 'test float');
  }
  const { secret } = await t.deps.tokens.create(id, { name: `t-${scopes.join('+')}`, scopes });
  const ip = freshIp();
  return {
    accountId: id,
    email,
    secret,
    call: (method, url, body, headers = {}) =>
      t.inject({
        method: method as 'GET',
        url,
        headers: {
          authorization: `Bearer ${secret}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        remoteAddress: ip,
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      }),
  };
}
