import type { RequestHandler } from "express";
import { isUuid } from "~/schemas/uuid";
import { ASSET_EXTENSIONS, type AssetContentType } from "~/schemas/branding";
import type { Db } from "../context";
import { findServedAsset } from "./service";

/**
 * GET /assets/branding/{organizationId}/{sha256}.{ext}: an uploaded logo or favicon. The hash
 * in the URL names the bytes, so a response never changes and may be cached for a year.
 * Registered before the build's /assets files; Vite's assets never live under /assets/branding.
 */
export const BRANDING_ASSET_ROUTE = "/assets/branding/:organizationId/:file";

const FILE = /^([0-9a-f]{64})\.([a-z]{3,4})$/;

/** Even opened directly, an SVG can run nothing, load nothing and reach nothing. */
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; sandbox";
const RASTER_POLICY = "default-src 'none'; sandbox";

/** The handler reads the asset through `db` (the shared client: a read outside any transaction). */
export function serveBrandingAsset(db: Db): RequestHandler {
  return (req, res, next) => {
    const organizationId = req.params.organizationId ?? "";
    const file = FILE.exec(req.params.file ?? "");
    if (!isUuid(organizationId) || !file) {
      res.status(404).set("Cache-Control", "no-store").type("text/plain").send("Not found");
      return;
    }
    const [, sha256, extension] = file;
    findServedAsset(db, organizationId, sha256!)
      .then((asset) => {
        const contentType = asset?.contentType as AssetContentType | undefined;
        if (!asset || !contentType || ASSET_EXTENSIONS[contentType] !== extension) {
          res.status(404).set("Cache-Control", "no-store").type("text/plain").send("Not found");
          return;
        }
        const etag = `"${asset.sha256}"`;
        res.set({
          "Content-Type": contentType,
          "Cache-Control": "public, max-age=31536000, immutable",
          "X-Content-Type-Options": "nosniff",
          "Content-Security-Policy": contentType === "image/svg+xml" ? SVG_POLICY : RASTER_POLICY,
          // Public images: other sites (and mail clients) may show them.
          "Cross-Origin-Resource-Policy": "cross-origin",
          ETag: etag,
        });
        if (req.headers["if-none-match"] === etag) {
          res.status(304).end();
          return;
        }
        res.status(200).end(Buffer.from(asset.bytes));
      })
      .catch(next);
  };
}
