// "Sign in with a passkey" on the sign-in page (CONTRACT §11): GET auth/passkey/ gives request
// options for any of this site's passkeys (discoverable: no name is typed first) and the session's
// CSRF token; the browser asks for the fingerprint, face, screen lock or security key; POST
// auth/passkey/ signs in fully (a passkey with user verification is two factors by itself).

import { useMutation } from '@tanstack/react-query';
import { Alert, Button, ErrorAlert } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { getPasskey, passkeyCancelled, passkeyProblem, passkeysSupported } from '../../lib/passkeys.ts';

export function PasskeySignIn({ remember, onSignedIn }: { remember: boolean; onSignedIn: () => Promise<void> }) {
  const signIn = useMutation({
    mutationFn: async () => {
      const { options } = await unwrap(api.GET('/api/v1/client/auth/passkey/'));
      const response = await getPasskey(options);
      return unwrap(api.POST('/api/v1/client/auth/passkey/', { body: { response, remember } }));
    },
    onSuccess: onSignedIn,
  });
  if (!passkeysSupported()) return null;
  const problem = passkeyProblem(signIn.error);
  return (
    <div className="passkey-sign-in">
      <p className="or" aria-hidden="true">
        <span>or</span>
      </p>
      {problem ? (
        <Alert kind={passkeyCancelled(signIn.error) ? 'warning' : 'error'}>
          <p>{problem}</p>
        </Alert>
      ) : signIn.error instanceof ApiError && signIn.error.code === 'invalid_credentials' ? (
        <Alert kind="error">
          <p>{signIn.error.message}</p>
          <p>
            It may have been removed from your account. Sign in with your password, then add it again under Account →
            Security.
          </p>
        </Alert>
      ) : (
        <ErrorAlert error={signIn.error} />
      )}
      <Button variant="secondary" busy={signIn.isPending} onClick={() => signIn.mutate()}>
        Sign in with a passkey
      </Button>
    </div>
  );
}
