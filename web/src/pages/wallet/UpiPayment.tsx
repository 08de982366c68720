// Step 1 of a top-up: where to pay. With the operator's UPI details, a QR code of the
// upi://pay link (amount filled in when it is valid), the VPA as text to copy, and on phones a
// link that opens a UPI app. Without them, a plain statement that they are not configured:
// no VPA is ever made up here.

import { useEffect, useState } from 'react';
import { Alert, CopyButton } from '../../components/ui.tsx';
import { rupees } from '../../lib/format.ts';
import { type UpiDetails, upiUri } from './money.ts';

export function UpiPayment({ upi, amount, note }: { upi: UpiDetails | null; amount: string | null; note: string }) {
  if (!upi) {
    return (
      <Alert kind="warning">
        <p>
          <strong>UPI payment details are not available.</strong> The operator has not configured a UPI ID for this
          panel yet, so there is no QR code to scan here. Contact support for the account to pay to, then report your
          payment below with its reference.
        </p>
      </Alert>
    );
  }
  return <UpiQr upi={upi} amount={amount} note={note} />;
}

function UpiQr({ upi, amount, note }: { upi: UpiDetails; amount: string | null; note: string }) {
  const uri = upiUri(upi, amount, note);
  const [image, setImage] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let live = true;
    setFailed(false);
    import('qrcode')
      .then((QRCode) => QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 240 }))
      .then((url) => {
        if (live) setImage(url);
      })
      .catch(() => {
        if (live) setFailed(true);
      });
    return () => {
      live = false;
    };
  }, [uri]);

  const label = amount ? `UPI QR code for ${rupees(amount)}` : 'UPI QR code (enter the amount in your app)';
  return (
    <div className="upi">
      <div className="upi-qr">
        {image && !failed ? (
          <img src={image} alt={label} width={240} height={240} />
        ) : (
          <p className="muted">{failed ? 'The QR code could not be drawn; use the UPI ID.' : 'Drawing the QR code…'}</p>
        )}
      </div>
      <div className="upi-details">
        <p>
          Scan with any UPI app (Google Pay, PhonePe, Paytm, BHIM){amount ? ` and pay ${rupees(amount)}` : ''}, or pay
          to this UPI ID:
        </p>
        <div className="upi-vpa">
          <span className="secret" id="upi-vpa">
            {upi.vpa}
          </span>
          <CopyButton text={upi.vpa} label="Copy UPI ID" />
        </div>
        <p className="muted">Payee: {upi.payeeName}</p>
        <p className="upi-open">
          <a className="btn btn-secondary" href={uri}>
            Open in a UPI app
          </a>
        </p>
        {amount ? null : <p className="hint">Enter the amount below and the QR code will include it.</p>}
      </div>
    </div>
  );
}
