// Money: wallets and their ledger, deposits, and orders (what an account pays for, and when).

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp, Paise } from './columns.ts';

export interface WalletsTable {
  account_id: number;
  balance_paise: ColumnType<string, bigint | string | undefined, bigint | string>;
  updated_at: CreatedAt;
  /** A debit that takes the balance below this sends wallet.low_balance (migration 0031); null: never. */
  low_balance_threshold_paise: ColumnType<string | null, bigint | string | null | undefined, bigint | string | null>;
}

/** `withdrawal`: money sent back out of the wallet (an online deposit refunded through the gateway). */
export type LedgerKind = 'deposit' | 'order' | 'renewal' | 'refund' | 'adjustment' | 'withdrawal';

export interface WalletTransactionsTable {
  id: Generated<number>;
  public_id: string;
  account_id: number;
  kind: LedgerKind;
  amount_paise: Paise;
  balance_after_paise: Paise;
  reference_type: string | null;
  reference_id: number | null;
  note: string | null;
  created_at: CreatedAt;
}

export type DepositStatus = 'pending' | 'approved' | 'rejected';
export type UploadType = 'png' | 'jpeg' | 'webp' | 'pdf';
export type DepositMethod = 'manual' | 'razorpay';

export interface DepositsTable {
  id: Generated<number>;
  public_id: string;
  account_id: number;
  amount_paise: Paise;
  /** How the money came: reported by the client (`manual`, staff review) or through Razorpay. */
  method: ColumnType<DepositMethod, DepositMethod | undefined, DepositMethod>;
  /** The manual proof: null on Razorpay deposits (a CHECK keeps them on manual ones). */
  txn_ref: string | null;
  screenshot_file: string | null;
  screenshot_type: UploadType | null;
  screenshot_bytes: number | null;
  /** The Razorpay order (`order_…`) and, once paid, payment (`pay_…`); unique. */
  gateway_order_id: string | null;
  gateway_payment_id: string | null;
  status: ColumnType<DepositStatus, DepositStatus | undefined, DepositStatus>;
  reason: string | null;
  reviewed_by: string | null;
  reviewed_at: NullableTimestamp;
  transaction_id: number | null;
  /** A refund back through the gateway (staff, `deposits refund`): at most one per deposit. */
  refund_gateway_id: ColumnType<string | null, string | null | undefined, string | null>;
  refund_amount_paise: ColumnType<string | null, bigint | string | null | undefined, bigint | string | null>;
  refund_reason: ColumnType<string | null, string | null | undefined, string | null>;
  refunded_by: ColumnType<string | null, string | null | undefined, string | null>;
  refunded_at: NullableTimestamp;
  refund_transaction_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The proof file was deleted with its account (migration 0030); the deposit stays. */
  proof_erased_at: NullableTimestamp;
  created_at: CreatedAt;
}

export type OrderStatus = 'unpaid' | 'paid' | 'refunded' | 'cancelled';

export interface OrdersTable {
  id: Generated<number>;
  public_id: string;
  account_id: number;
  plan_id: number;
  service_id: number | null;
  /** resize: the pro-rata difference of a move to a larger plan (0033); addon: the pro-rata charge of an add-on turned on (scheduled backups, 0034). */
  kind: 'new' | 'renewal' | 'resize' | 'addon';
  status: OrderStatus;
  amount_paise: Paise;
  config: ColumnType<Record<string, unknown>, string | undefined, string>;
  domain: string | null;
  location_id: number | null;
  transaction_id: number | null;
  refund_transaction_id: number | null;
  created_at: CreatedAt;
  paid_at: NullableTimestamp;
  /** A renewal: the paid_until it extends by a month (unique per service: one order per period). */
  renews_from: NullableTimestamp;
}

export type LedgerRow = Selectable<WalletTransactionsTable>;
export type Deposit = Selectable<DepositsTable>;
export type Order = Selectable<OrdersTable>;
