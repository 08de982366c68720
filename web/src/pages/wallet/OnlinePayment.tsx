// Pay online (CONTRACT §12): an amount, then Razorpay's Hosted Checkout (UPI, card, netbanking).
// The server opens a pending deposit and answers the checkout form (its address and hidden
// fields); the page submits that form, so the browser goes to the gateway's page (the panel's
// CSP allows forms to that one origin when a gateway is configured). The gateway sends the
// customer back to /wallet/razorpay-return (RazorpayReturnPage), which verifies the payment.
// Where to go after a successful payment (the order page's "top up ₹N") is kept for the return
// in sessionStorage: the way through the gateway cannot carry it.

import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert, TextField } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { rupees } from '../../lib/format.ts';
import { amountProblem, normaliseAmount } from './money.ts';

export const RETURN_KEY = 'hostplane:online-payment-return';

interface CheckoutForm {
  url: string;
  fields: Record<string, string>;
}

/** Submit the gateway's form: the browser leaves the panel for the payment page. */
function goToCheckout(checkout: CheckoutForm): void {
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = checkout.url;
  form.hidden = true;
  for (const [name, value] of Object.entries(checkout.fields)) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
}

function onlineAmountProblem(raw: string): string | null {
  const problem = amountProblem(raw);
  if (problem === 'Enter the amount you paid.') return 'Enter the amount to add.';
  if (problem) return problem;
  const value = Number(raw.replace(/[₹,\s]/g, ''));
  return value < 1 ? 'An online payment is at least ₹1.00.' : null;
}

export function OnlinePayment({
  initialAmount,
  returnTo,
}: {
  initialAmount: string | null;
  returnTo: { to: string; label: string } | null;
}) {
  const [amount, setAmount] = useState(initialAmount ?? '');
  const [local, setLocal] = useState<string | null>(null);
  const [edited, setEdited] = useState(false);
  const input = useRef<HTMLFormElement>(null);

  // A new ?amount= (the order page's "top up ₹N") replaces the amount.
  useEffect(() => {
    if (initialAmount) setAmount(initialAmount);
  }, [initialAmount]);

  const start = useMutation({
    mutationFn: async (value: string) => {
      const answer = await unwrap(
        api.POST('/api/v1/client/wallet/deposit/', { body: { method: 'razorpay', amount: value } }),
      );
      if (!('checkout' in answer)) throw new Error('The server did not answer with a payment page.');
      return answer.checkout;
    },
    onSuccess: (checkout) => {
      if (returnTo) sessionStorage.setItem(RETURN_KEY, returnTo.to);
      else sessionStorage.removeItem(RETURN_KEY);
      goToCheckout(checkout);
    },
  });

  const serverAmount = !edited
    ? start.error instanceof ApiError
      ? start.error.field('amount')
      : undefined
    : undefined;
  const amountError = local ?? (serverAmount ? `The amount ${serverAmount}.` : undefined);

  useEffect(() => {
    if (amountError) input.current?.querySelector<HTMLInputElement>('input[name="amount"]')?.focus();
  }, [amountError]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (start.isPending || start.isSuccess) return;
    const problem = onlineAmountProblem(amount);
    setLocal(problem);
    setEdited(false);
    if (problem) return;
    start.mutate(normaliseAmount(amount) ?? amount.trim());
  }

  const normalised = normaliseAmount(amount);
  const leaving = start.isSuccess;
  return (
    <form ref={input} className="online-pay" onSubmit={submit} noValidate aria-describedby="online-help">
      <p className="hint" id="online-help">
        You pay on Razorpay's secure page and come back here; the money is in your balance as soon as the payment goes
        through. No screenshot, no waiting for approval.
      </p>
      <TextField
        label="Amount to add (₹)"
        name="amount"
        inputMode="decimal"
        autoComplete="off"
        value={amount}
        onChange={(e) => {
          setAmount(e.target.value);
          setLocal(null);
          setEdited(true);
        }}
        error={amountError}
        hint="For example 500 or 499.50; from ₹1.00 to ₹1,00,000.00."
        disabled={start.isPending || leaving}
      />
      {start.isError && !(start.error instanceof ApiError && start.error.field('amount')) ? (
        start.error instanceof ApiError && start.error.code === 'not_supported' ? (
          <Alert kind="warning">
            <p>{start.error.message}</p>
          </Alert>
        ) : (
          <ErrorAlert error={start.error} fields={['amount']} />
        )
      ) : null}
      {leaving ? (
        <p className="muted" role="status">
          Opening the payment page…
        </p>
      ) : null}
      <div className="row">
        <Button type="submit" busy={start.isPending || leaving}>
          {normalised ? `Pay ${rupees(normalised)} online` : 'Pay online'}
        </Button>
      </div>
    </form>
  );
}
