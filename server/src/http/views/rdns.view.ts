// How a service's reverse DNS looks after a change, on every surface (core/product-kit/reverse-dns.ts).

import { Type } from 'typebox';

export const RdnsSchema = Type.Object({
  ipv4: Type.String({ description: 'the address whose PTR record this is' }),
  ptr: Type.Union([Type.String(), Type.Null()], { description: 'its PTR hostname now; null: none' }),
});
