// Shown on every signed-in page while the account is scheduled for deletion (CONTRACT §11): the date,
// and a button that cancels it at once. The privacy page (Account → Privacy) says more.

import { useMutation } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../lib/api.ts';
import { when } from '../lib/format.ts';
import { useAccount, useSetAccount } from '../lib/session.tsx';
import { Button, ErrorAlert } from './ui.tsx';

/** Cancel a scheduled deletion and put the answer's account in the cache. */
export function useCancelDeletion() {
  const setAccount = useSetAccount();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/account/', { body: { action: 'cancel_deletion' } })),
    onSuccess: (data) => setAccount(data.account),
  });
}

export function DeletionBanner() {
  const account = useAccount();
  const cancel = useCancelDeletion();
  const at = account.data?.deletion_scheduled_for;
  if (!at) return null;
  return (
    <section className="deletion-banner" aria-label="Account deletion">
      <p>
        <strong>Your account will be deleted on {when(at)}.</strong> Everything in it will be erased.{' '}
        <Link to="/account/privacy">What is erased and what is kept</Link>
      </p>
      <Button variant="secondary" busy={cancel.isPending} onClick={() => cancel.mutate()}>
        Cancel deletion
      </Button>
      <ErrorAlert error={cancel.error} />
    </section>
  );
}
