// Every product the platform sells, one line each: the only file that names them all. Imported
// by core/deps.ts alone, which builds the registry (core/product-kit/registry.ts) from it and
// hands that to whatever needs a product. A new product type: docs/ARCHITECTURE.md, "Adding a
// product type".

import type { ProductList } from '../product-kit/registry.ts';
import { baremetalProduct } from './baremetal/index.ts';
import { gameProduct } from './game/index.ts';
import { vpsProduct } from './vps/index.ts';
import { webProduct } from './web/index.ts';

export const PRODUCTS: ProductList = {
  vps: vpsProduct,
  game: gameProduct,
  web: webProduct,
  baremetal: baremetalProduct,
};
