/** oidc-provider's own in-memory adapter and its LRU (no public types; the package has no "exports" map). */
declare module "oidc-provider/lib/helpers/lru.js" {
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}

declare module "oidc-provider/lib/adapters/memory_adapter.js" {
  import { type Adapter } from "oidc-provider";
  import type LRU from "oidc-provider/lib/helpers/lru.js";

  export default class MemoryAdapter implements Adapter {
    constructor(model: string, store?: LRU, clockTolerance?: number);
    upsert: Adapter["upsert"];
    find: Adapter["find"];
    findByUserCode: Adapter["findByUserCode"];
    findByUid: Adapter["findByUid"];
    consume: Adapter["consume"];
    destroy: Adapter["destroy"];
    revokeByGrantId: Adapter["revokeByGrantId"];
  }
}
