// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// GST building blocks (issue 35, gst.md): GSTIN vectors and refusals, the tax split within and
// across states with inclusive and exclusive prices (and a property over random amounts: the
// heads add up to the total exactly and the tax is the rate of the taxable value within a
// paisa), the amount in words in Indian numbering, the financial year's boundaries in IST and
// the invoice number's rule-46 limits; the charge of a price (charge.ts) both ways, and the
// invoice's split of what was charged giving back an exclusive price as its taxable value.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { chargeOfPrice } from '../src/core/billing/charge.ts';
import {
  amountInWords,
  financialYear,
  GST_STATE_CODES,
  gstinCheckCharacter,
  invoiceNumber,
  normalizeGstin,
  placeOfSupply,
  stateName,
  taxSplit,
  validateGstin,
} from '../src/core/billing/gst.ts';
import { invoiceSplit } from '../src/core/billing/invoices.ts';

describe('state codes', () => {
  test('names and the list', () => {
    assert.equal(stateName('27'), 'Maharashtra');
    assert.equal(stateName('29'), 'Karnataka');
    assert.equal(stateName('97'), 'Other Territory');
    assert.equal(stateName('25'), null);
    assert.equal(stateName('7'), null);
    assert.equal(stateName('__proto__'), null);
    assert.equal(GST_STATE_CODES.length, 37);
    assert.ok(GST_STATE_CODES.every((c) => /^\d\d$/.test(c)));
  });
});

describe('GSTIN', () => {
  test('the published examples are valid', () => {
    assert.equal(validateGstin('27AAPFU0939F1ZV'), null);
    assert.equal(validateGstin('29AAGCB7383J1Z4'), null);
    assert.equal(validateGstin('27AAPFU0939F1ZV', '27'), null);
    assert.equal(gstinCheckCharacter('27AAPFU0939F1Z'), 'V');
    assert.equal(gstinCheckCharacter('29AAGCB7383J1Z'), '4');
  });

  test('a wrong check character is refused', () => {
    assert.match(validateGstin('27AAPFU0939F1ZW') ?? '', /check character/);
    assert.match(validateGstin('29AAGCB7383J1Z5') ?? '', /check character/);
    // One digit mistyped in the PAN, check character kept: caught.
    assert.match(validateGstin('27AAPFU0938F1ZV') ?? '', /check character/);
  });

  test('the state must exist and match the one given', () => {
    assert.match(validateGstin('27AAPFU0939F1ZV', '29') ?? '', /state code 27.*state is 29/);
    for (const prefix of ['25', '28', '99', '00']) {
      const body = `${prefix}AAPFU0939F1Z`;
      const gstin = body + gstinCheckCharacter(body);
      assert.match(validateGstin(gstin) ?? '', /not a GST state code/, gstin);
    }
  });

  test('bad formats are refused', () => {
    for (const bad of [
      '',
      '27AAPFU0939F1Z',
      '27AAPFU0939F1ZVX',
      '27AAPFU0939F0ZV', // entity number 0
      '27AAPFU0939F1YV', // 14th character must be Z
      '27AAPF10939F1ZV', // PAN: five letters first
      '27AAPFU093XF1ZV', // PAN: then four digits
      '27AAPFU093911ZV', // PAN: then a letter
      'X7AAPFU0939F1ZV',
      '27AAPFU0939F1Z ',
      '27AAPFU0939F1Z-',
    ]) {
      assert.notEqual(validateGstin(bad), null, bad);
    }
  });

  test('lower case is refused as is, and valid once normalised (the service normalises)', () => {
    assert.match(validateGstin('27aapfu0939f1zv') ?? '', /capital letters/);
    assert.equal(normalizeGstin(' 27aapfu0939f1zv '), '27AAPFU0939F1ZV');
    assert.equal(validateGstin(normalizeGstin(' 27aapfu0939f1zv ')), null);
  });
});

describe('tax split', () => {
  test('place of supply: the customer state, else the seller state', () => {
    assert.equal(placeOfSupply('29', '27'), '29');
    assert.equal(placeOfSupply(null, '27'), '27');
  });

  test('intra-state, prices with GST: ₹499 → CGST + SGST', () => {
    const split = taxSplit({ amountPaise: 49_900n, pricesIncludeGst: true, sellerState: '27', placeOfSupply: '27' });
    assert.deepEqual(split, {
      taxablePaise: 42_288n,
      cgstPaise: 3806n,
      sgstPaise: 3806n,
      igstPaise: 0n,
      totalPaise: 49_900n,
      rateBps: 1800,
      intraState: true,
    });
  });

  test('an odd paisa of tax goes to SGST', () => {
    // ₹1 with GST: taxable 100 / 1.18 = 84.75 → 85, tax 15 = CGST 7 + SGST 8.
    const split = taxSplit({ amountPaise: 100, pricesIncludeGst: true, sellerState: '27', placeOfSupply: '27' });
    assert.equal(split.taxablePaise, 85n);
    assert.equal(split.cgstPaise, 7n);
    assert.equal(split.sgstPaise, 8n);
  });

  test('inter-state, prices with GST: IGST only', () => {
    const split = taxSplit({ amountPaise: 49_900, pricesIncludeGst: true, sellerState: '27', placeOfSupply: '29' });
    assert.deepEqual(
      [split.taxablePaise, split.cgstPaise, split.sgstPaise, split.igstPaise, split.totalPaise, split.intraState],
      [42_288n, 0n, 0n, 7612n, 49_900n, false],
    );
  });

  test('prices before GST: the tax is added, rounded half up', () => {
    const intra = taxSplit({ amountPaise: 42_288n, pricesIncludeGst: false, sellerState: '27', placeOfSupply: '27' });
    // 42288 × 0.18 = 7611.84 → 7612.
    assert.deepEqual(
      [intra.taxablePaise, intra.cgstPaise, intra.sgstPaise, intra.igstPaise, intra.totalPaise],
      [42_288n, 3806n, 3806n, 0n, 49_900n],
    );
    // 25 × 0.18 = 4.5 → 5 (half up); 24 × 0.18 = 4.32 → 4.
    const half = taxSplit({ amountPaise: 25, pricesIncludeGst: false, sellerState: '27', placeOfSupply: '07' });
    assert.equal(half.igstPaise, 5n);
    assert.equal(half.totalPaise, 30n);
    const down = taxSplit({ amountPaise: 24, pricesIncludeGst: false, sellerState: '27', placeOfSupply: '07' });
    assert.equal(down.igstPaise, 4n);
  });

  test('zero and another rate; negative or fractional amounts are refused', () => {
    const zero = taxSplit({ amountPaise: 0, pricesIncludeGst: true, sellerState: '27', placeOfSupply: '27' });
    assert.equal(zero.totalPaise + zero.taxablePaise + zero.cgstPaise + zero.sgstPaise, 0n);
    const twelve = taxSplit({
      amountPaise: 11_200,
      pricesIncludeGst: true,
      sellerState: '27',
      placeOfSupply: '29',
      rateBps: 1200,
    });
    assert.equal(twelve.taxablePaise, 10_000n);
    assert.equal(twelve.igstPaise, 1200n);
    const base = { pricesIncludeGst: true, sellerState: '27', placeOfSupply: '27' };
    assert.throws(() => taxSplit({ ...base, amountPaise: -1 }), RangeError);
    assert.throws(() => taxSplit({ ...base, amountPaise: 1.5 }), RangeError);
  });

  test('property: heads add up to the total, and the tax is 18 % of the taxable value within a paisa', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 100_000_000n }), // 1 paisa to ₹10 lakh
        fc.boolean(),
        fc.constantFrom('27', '29', '07'),
        (amount, inclusive, customer) => {
          const split = taxSplit({
            amountPaise: amount,
            pricesIncludeGst: inclusive,
            sellerState: '27',
            placeOfSupply: placeOfSupply(customer, '27'),
          });
          const { taxablePaise, cgstPaise, sgstPaise, igstPaise, totalPaise } = split;
          assert.equal(taxablePaise + cgstPaise + sgstPaise + igstPaise, totalPaise);
          assert.equal(inclusive ? totalPaise : taxablePaise, amount);
          const tax = cgstPaise + sgstPaise + igstPaise;
          // |tax − 0.18 × taxable| ≤ 1 paisa, in hundredths of a paisa to stay in integers.
          const error = tax * 10_000n - taxablePaise * 1800n;
          assert.ok(error <= 10_000n && error >= -10_000n, `tax ${tax} of ${taxablePaise}`);
          assert.ok(taxablePaise >= 0n && cgstPaise >= 0n && sgstPaise >= 0n && igstPaise >= 0n);
          if (split.intraState) {
            assert.equal(igstPaise, 0n);
            assert.ok(sgstPaise - cgstPaise === 0n || sgstPaise - cgstPaise === 1n);
          } else {
            assert.equal(cgstPaise + sgstPaise, 0n);
          }
        },
      ),
      { seed: 20261128, numRuns: 2000 },
    );
  });
});

describe('amount in words', () => {
  test('Indian numbering vectors', () => {
    const cases: [bigint | number, string][] = [
      [123_456_789n, 'Rupees Twelve Lakh Thirty-Four Thousand Five Hundred Sixty-Seven and Eighty-Nine Paise Only'],
      [0, 'Rupees Zero Only'],
      [50, 'Fifty Paise Only'],
      [1, 'One Paise Only'],
      [100, 'Rupees One Only'],
      [49_900, 'Rupees Four Hundred Ninety-Nine Only'],
      [50_000_00, 'Rupees Fifty Thousand Only'],
      [1_00_000_00, 'Rupees One Lakh Only'],
      [1_00_00_000_00, 'Rupees One Crore Only'],
      [1_01_01_101_01, 'Rupees One Crore One Lakh One Thousand One Hundred One and One Paise Only'],
      [
        99_99_99_999_99,
        'Rupees Ninety-Nine Crore Ninety-Nine Lakh Ninety-Nine Thousand Nine Hundred Ninety-Nine and Ninety-Nine Paise Only',
      ],
      [1_00_000_00_00_000_00n, 'Rupees One Lakh Crore Only'],
      [11_900, 'Rupees One Hundred Nineteen Only'],
      [2_000_10, 'Rupees Two Thousand and Ten Paise Only'],
      [40_00_000_00, 'Rupees Forty Lakh Only'],
    ];
    for (const [paise, words] of cases) assert.equal(amountInWords(paise), words, String(paise));
    assert.throws(() => amountInWords(-1), RangeError);
  });
});

describe('financial year and invoice number', () => {
  test('the year turns on 1 April in India Standard Time', () => {
    // 2026-04-01 00:00 IST is 2026-03-31 18:30 UTC.
    assert.equal(financialYear(new Date('2026-03-31T18:29:59.999Z')), '2526');
    assert.equal(financialYear(new Date('2026-03-31T18:30:00.000Z')), '2627');
    assert.equal(financialYear(new Date('2026-04-01T00:00:00+05:30')), '2627');
    assert.equal(financialYear(new Date('2026-12-31T23:59:59Z')), '2627');
    assert.equal(financialYear(new Date('2027-03-31T23:59:59.999+05:30')), '2627');
    assert.equal(financialYear(new Date('2027-03-31T18:30:00.000Z')), '2728');
    assert.equal(financialYear(new Date('2000-01-15T00:00:00Z')), '9900');
    assert.equal(financialYear(new Date('2099-06-01T00:00:00Z')), '9900');
    assert.throws(() => financialYear(new Date('nonsense')), RangeError);
  });

  test('numbers are prefix/FY/serial, at most 16 characters of A-Z 0-9 / -', () => {
    assert.equal(invoiceNumber('HP', '2627', 42), 'HP/2627/000042');
    assert.equal(invoiceNumber('HPC', '2627', 1n), 'HPC/2627/000001');
    assert.equal(invoiceNumber('HP-I', '2627', 999_999), 'HP-I/2627/999999');
    assert.equal(invoiceNumber('HP', '2627', 1_234_567), 'HP/2627/1234567');
    assert.throws(() => invoiceNumber('HOSTPLANE', '2627', 1), /rule 46/);
    assert.throws(() => invoiceNumber('HP-I', '2627', 1_000_000), /rule 46/);
    assert.throws(() => invoiceNumber('hp', '2627', 1), /rule 46/);
    assert.throws(() => invoiceNumber('H P', '2627', 1), /rule 46/);
    assert.throws(() => invoiceNumber('HP', '26-27', 1), RangeError);
    assert.throws(() => invoiceNumber('HP', '2627', 0), RangeError);
  });
});

describe('the charge of a price (charge.ts) and the invoice of what was charged', () => {
  const inclusive = { pricesIncludeGst: true, sellerStateCode: '27' };
  const exclusive = { pricesIncludeGst: false, sellerStateCode: '27' };

  test('inclusive: the price is charged; exclusive: the price plus 18 %, the same total in every state', () => {
    const inc = chargeOfPrice(inclusive, 79_900n);
    assert.deepEqual([inc.totalPaise, inc.taxPaise, inc.split.taxablePaise], [79_900n, 12_188n, 67_712n]);
    for (const supply of ['27', '29']) {
      const exc = chargeOfPrice(exclusive, 79_900n, supply);
      // 79900 × 0.18 = 14382.
      assert.deepEqual([exc.totalPaise, exc.taxPaise, exc.split.taxablePaise], [94_282n, 14_382n, 79_900n]);
      assert.equal(exc.placeOfSupply, supply);
      assert.equal(exc.split.intraState, supply === '27');
    }
    // ₹0.25: 4.5 paise of tax rounds half up to 5.
    assert.equal(chargeOfPrice(exclusive, 25n).totalPaise, 30n);
  });

  test('the invoice of an exclusive charge has the price as taxable value and the same heads, every price to ₹20,000', () => {
    for (let price = 0n; price <= 2_000_000n; price++) {
      for (const supply of ['27', '29']) {
        const charged = chargeOfPrice(exclusive, price, supply).split;
        const invoiced = invoiceSplit(exclusive, charged.totalPaise, supply);
        if (
          invoiced.taxablePaise !== price ||
          invoiced.cgstPaise !== charged.cgstPaise ||
          invoiced.sgstPaise !== charged.sgstPaise ||
          invoiced.igstPaise !== charged.igstPaise ||
          invoiced.totalPaise !== charged.totalPaise
        )
          assert.fail(`price ${price} in ${supply}: charged ${JSON.stringify(String(charged.totalPaise))}`);
      }
    }
  });

  test('property: the same up to ₹10 lakh, and an inclusive charge is its own invoice', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 100_000_000n }), fc.constantFrom('27', '29', '07'), (price, supply) => {
        const charged = chargeOfPrice(exclusive, price, supply).split;
        assert.deepEqual(invoiceSplit(exclusive, charged.totalPaise, supply), charged);
        const inc = chargeOfPrice(inclusive, price, supply).split;
        assert.deepEqual(invoiceSplit(inclusive, inc.totalPaise, supply), inc);
      }),
      { seed: 20270401, numRuns: 5000 },
    );
  });
});
