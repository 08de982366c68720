// /wallet/razorpay-return: where the customer comes back from Razorpay's payment page (the
// server turns the gateway's POST into this page's query; a cancel comes with ?cancelled=1).
// With the signed fields it asks the server to verify the payment (which credits the wallet
// once) and goes on to the wallet, which says what happened and shows the new balance; a
// failed or cancelled payment goes there too, saying that nothing was added. The fields leave
// the address bar as soon as they are read.

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Loading, PageHeader } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { rupees } from '../../lib/format.ts';
import { ACCOUNT_KEY } from '../../lib/session.tsx';
import { gatewayWords, safeReturn } from './money.ts';
import { RETURN_KEY } from './OnlinePayment.tsx';

/** What the wallet page shows after the way back (router state; never in the address bar). */
export interface OnlineOutcome {
  kind: 'success' | 'warning' | 'error';
  title: string;
  text: string;
  /** The page the payment was for (the order), when there was one. */
  back?: { to: string; label: string } | null;
}

function takeReturn(): { to: string; label: string } | null {
  const raw = sessionStorage.getItem(RETURN_KEY);
  sessionStorage.removeItem(RETURN_KEY);
  return safeReturn(raw);
}

async function outcomeOf(query: URLSearchParams): Promise<OnlineOutcome> {
  const orderId = query.get('razorpay_order_id');
  const paymentId = query.get('razorpay_payment_id');
  const signature = query.get('razorpay_signature');
  if (query.get('cancelled') === '1') {
    return {
      kind: 'warning',
      title: 'Payment cancelled',
      text: 'You closed the payment page, so nothing was paid and nothing was added to your wallet. You can start again whenever you like.',
    };
  }
  if (query.get('error_code') || !orderId || !paymentId || !signature) {
    const why = gatewayWords(query.get('error_description'));
    return {
      kind: 'error',
      title: 'The payment did not go through',
      text: `${why ? `Razorpay said: “${why}.” ` : ''}Nothing was added to your wallet. If your bank shows the money as taken, it is returned to you by the bank; you can try again with another method.`,
    };
  }
  try {
    const answer = await unwrap(
      api.POST('/api/v1/client/wallet/deposit/', {
        body: {
          action: 'razorpay_verify',
          razorpay_order_id: orderId,
          razorpay_payment_id: paymentId,
          razorpay_signature: signature,
        },
      }),
    );
    const deposit = answer.deposit;
    if (deposit.status === 'approved') {
      return {
        kind: 'success',
        title: 'Payment received',
        text: `${rupees(deposit.amount)} was added to your wallet.`,
      };
    }
    if (deposit.status === 'rejected') {
      return {
        kind: 'error',
        title: 'The payment did not go through',
        text: `${gatewayWords(deposit.reason) ? `Razorpay said: “${gatewayWords(deposit.reason)}.” ` : ''}Nothing was added to your wallet.`,
      };
    }
    return {
      kind: 'warning',
      title: 'Payment not confirmed yet',
      text: `Razorpay has not confirmed your payment of ${rupees(deposit.amount)} yet. It is added to your wallet as soon as it is; the deposit list below updates by itself.`,
    };
  } catch (error) {
    const why =
      error instanceof ApiError && error.code === 'bad_signature'
        ? 'The payment page’s answer could not be verified.'
        : error instanceof Error
          ? error.message
          : String(error);
    return {
      kind: 'error',
      title: 'We could not confirm the payment',
      text: `${why} Nothing was added to your wallet from this page. If you were charged, the payment is added as soon as Razorpay tells us; otherwise contact support.`,
    };
  }
}

export default function RazorpayReturnPage() {
  useTitle('Confirming your payment');
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const started = useRef(false);
  const [stuck, setStuck] = useState(false);

  useEffect(() => {
    // Once per visit (StrictMode runs effects twice; the verify is safe twice, but one is enough).
    if (started.current) return;
    started.current = true;
    const query = new URLSearchParams(location.search);
    const back = takeReturn();
    outcomeOf(query)
      .then(async (outcome) => {
        // The wallet page loads its balance and deposits afresh (never the ones from before paying).
        client.removeQueries({ queryKey: ['wallet'] });
        client.removeQueries({ queryKey: ['wallet-deposits'] });
        await client.invalidateQueries({ queryKey: ACCOUNT_KEY });
        const state: OnlineOutcome = { ...outcome, back: outcome.kind === 'success' ? back : null };
        navigate('/wallet', { replace: true, state: { online: state } });
      })
      .catch(() => setStuck(true));
  }, [location.search, navigate, client]);

  return (
    <div className="page narrow">
      <PageHeader title="Confirming your payment" />
      {stuck ? (
        <Alert kind="error">
          <p>
            Something went wrong on this page. <Link to="/wallet">Open your wallet</Link> to see whether the payment was
            added.
          </p>
        </Alert>
      ) : (
        <Loading what="Checking the payment with Razorpay" />
      )}
    </div>
  );
}
