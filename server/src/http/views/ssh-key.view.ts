// How an SSH key looks, on every surface (the session's /client/ssh-keys/ and the cloud's
// /ssh-keys); its fields are core/ssh/ssh-key.service.ts sshKeyView.

import { Type } from 'typebox';

export const SshKeySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  type: Type.String({ description: 'ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa' }),
  bits: Type.Integer(),
  fingerprint: Type.String({ description: 'SHA256:…, as ssh-keygen -l prints it' }),
  public_key: Type.String(),
  created_at: Type.String(),
});
