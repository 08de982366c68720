// The Razorpay driver: the API client (orders, payments, refunds) and the signature checks of
// checkout's hand-back and of webhooks. Not a node driver (no registry entry): one merchant
// account per installation, configured by RAZORPAY_* (config.ts).

export type { RazorpayConfig, RazorpayOrder, RazorpayPayment, RazorpayRefund } from './client.ts';
export { RazorpayClient } from './client.ts';
export { checkoutSignature, verifyCheckoutSignature, verifyWebhookSignature } from './signatures.ts';
