import express, { type Request, type Response, type Router } from "express";
import { findUnrepresentable } from "~/schemas/text";
import { MAX_JSON_DEPTH, textNestsDeeperThan } from "~/schemas/json-depth";
import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";
import { readContext, stagedContext, type Actor } from "../context";
import { toAppError } from "../db/errors";
import { RETRY_AFTER_SECONDS } from "../errors";
import type { RateLimits } from "../rate-limit/limiters";
import type { Services } from "../services";
import {
  requireScimAccess,
  requireScimOrganization,
  type ScimAccess,
} from "./access";
import {
  MAX_SCIM_BODY_BYTES,
  resourceTypes,
  schemas,
  serviceProviderConfig,
} from "./discovery";
import { invalidSyntax, invalidValue, ScimError } from "./errors";
import {
  createScimGroup,
  deleteScimGroup,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  replaceScimGroup,
} from "./groups";
import { scimEndpointOf } from "./paths";
import { ifMatchVersion, pagingOf, type ScimScope } from "./resource";
import {
  createScimUser,
  deleteScimUser,
  getScimUser,
  listScimUsers,
  patchScimUser,
  replaceScimUser,
} from "./users";

/**
 * `/{slug}/scim/v2` (RFC 7644), decision 084: the door of an organization's provisioning
 * clients. It checks the organization and the bearer token, limits requests per address and per
 * token, reads JSON bodies within bounds, and hands the resource modules a context acting as the
 * token; every refusal is a SCIM error body.
 */
const SCIM_JSON = "application/scim+json";

const parseJson = express.json({
  limit: MAX_SCIM_BODY_BYTES,
  type: () => true,
  strict: true,
  // Too deep a nesting is refused before the text is parsed, which such nesting makes slow (~/schemas/json-depth).
  verify: (_req, _res, buffer) => {
    if (textNestsDeeperThan(buffer.toString("utf8")))
      throw invalidSyntax(
        `The body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`
      );
  },
});

function bearerOf(req: Request): string | undefined {
  const match = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(
    req.get("authorization") ?? ""
  );
  return match?.[1];
}

function send(
  res: Response,
  status: number,
  body: unknown,
  headers: Record<string, string> = {}
) {
  res
    .status(status)
    .set({ "Cache-Control": "no-store", ...headers })
    .type(SCIM_JSON)
    .send(JSON.stringify(body));
}

/** The body of a POST, PUT or PATCH: SCIM's media type (or plain JSON), within the size and depth limits, storable text only. */
function readBody(req: Request, res: Response): Promise<unknown> {
  if (!req.is([SCIM_JSON, "application/json"])) {
    return Promise.reject(
      new ScimError(415, `Send the body as ${SCIM_JSON} (or application/json).`)
    );
  }
  return new Promise((resolve, reject) => {
    parseJson(req, res, (error?: unknown) => {
      if (!error) {
        const at = findUnrepresentable(req.body);
        return at === undefined
          ? resolve(req.body)
          : reject(
              invalidValue(
                `${
                  at || "The body"
                } contains a character that cannot be stored (NUL or an unpaired surrogate).`
              )
            );
      }
      const type = (error as { type?: string }).type;
      if (type === "entity.too.large")
        return reject(
          new ScimError(
            413,
            `The body is larger than ${MAX_SCIM_BODY_BYTES} bytes.`,
            undefined,
            { Connection: "close" }
          )
        );
      if (error instanceof ScimError) return reject(error);
      if (type === "entity.verify.failed")
        return reject(
          invalidSyntax(
            `The body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`
          )
        );
      reject(invalidSyntax("The body is not valid JSON."));
    });
  });
}

/** A service's error as SCIM says it (RFC 7644 §3.12): a stale version is 412, a duplicate is uniqueness. */
function scimErrorOf(error: unknown): ScimError | null {
  if (error instanceof ScimError) return error;
  const app = toAppError(error);
  if (!app) return null;
  if (app.status === 503)
    return new ScimError(
      503,
      "Porta cannot reach its database right now. Try again shortly.",
      undefined,
      { "Retry-After": String(RETRY_AFTER_SECONDS) }
    );
  if (app.code === "etag_mismatch")
    return new ScimError(412, "The resource changed since you read it.");
  if (app.code === "duplicate")
    return new ScimError(409, app.message, "uniqueness");
  if (app.status === 422)
    return invalidValue(
      [
        app.message,
        ...(app.details ?? []).map((d) => `${d.field} ${d.message}`),
      ].join(" ")
    );
  return new ScimError(app.status, app.message);
}

const single = (value: unknown): string | undefined =>
  typeof value === "string" ? value : undefined;

/** Whether a read leaves the group's members out (`excludedAttributes=members`, as Entra ID asks). */
function withMembers(req: Request): boolean {
  const excluded = single(req.query.excludedAttributes) ?? "";
  return !excluded
    .split(",")
    .some((name) =>
      /^(urn:ietf:params:scim:schemas:core:2\.0:group:)?members$/i.test(
        name.trim()
      )
    );
}

/** Mount as `app.use("/:slug/scim/v2", scimRoutes(services, limits))`. */
export function scimRoutes(services: Services, limits: RateLimits): Router {
  const router = express.Router({ mergeParams: true });
  const meta = (req: Request) => ({
    ip: req.ip ?? null,
    requestId: (req.res?.locals.requestId as string | undefined) ?? null,
  });
  const asToken = (req: Request, access: ScimAccess) => {
    const actor: Actor = {
      type: "scim_token",
      id: access.token.id,
      ...meta(req),
    };
    return stagedContext(services, actor);
  };

  type Work = (
    req: Request,
    res: Response,
    access: ScimAccess,
    scope: ScimScope
  ) => Promise<void>;
  type PublicWork = (
    req: Request,
    res: Response,
    scope: ScimScope
  ) => Promise<void>;

  /** Limits by address, checks the organization (and, unless public, the token and its limit), runs the work, answers errors as SCIM. */
  const serve =
    (
      open: boolean,
      work: (
        req: Request,
        res: Response,
        access: ScimAccess | null,
        scope: ScimScope
      ) => Promise<void>
    ) =>
    (req: Request, res: Response, next: (error?: unknown) => void) => {
      const slug = (req.params as { slug?: string }).slug ?? "";
      if (!SLUG_PATTERN_ANY_CASE.test(slug)) return next();
      (async () => {
        const byAddress = await limits.consume(
          "scimIp",
          `${slug.toLowerCase()}:${req.ip ?? "unknown"}`
        );
        if (!byAddress.allowed)
          throw new ScimError(
            429,
            "Too many requests from this address; try again later.",
            undefined,
            { "Retry-After": String(byAddress.retryAfterSeconds) }
          );
        const anonymous = readContext(services, {
          type: "anonymous",
          id: null,
          ...meta(req),
        });
        if (open) {
          const org = await requireScimOrganization(anonymous, slug);
          return work(req, res, null, {
            organizationId: org.id,
            endpoint: scimEndpointOf(services.config.baseUrl, org.slug),
          });
        }
        const access = await requireScimAccess(anonymous, slug, bearerOf(req));
        const byToken = await limits.consume("scimToken", access.token.id);
        if (!byToken.allowed)
          throw new ScimError(
            429,
            "Too many requests with this token; try again later.",
            undefined,
            { "Retry-After": String(byToken.retryAfterSeconds) }
          );
        return work(req, res, access, {
          organizationId: access.organizationId,
          endpoint: scimEndpointOf(services.config.baseUrl, access.slug),
        });
      })().catch((error: unknown) => {
        const scim = scimErrorOf(error);
        if (scim && !res.headersSent)
          return send(res, scim.status, scim.toBody(), scim.headers);
        if (res.headersSent) return next(error);
        // A defect: logged with its stack as the app's error handler does, answered as SCIM with the request id only.
        services.logger.error({ err: error }, "unhandled error");
        const requestId = (res.locals.requestId as string | undefined) ?? "";
        send(res, 500, new ScimError(500, `Something went wrong. Quote the request id ${requestId} when you report it.`).toBody());
      });
    };
  const handle = (work: Work) =>
    serve(false, (req, res, access, scope) => work(req, res, access!, scope));
  const handlePublic = (work: PublicWork) =>
    serve(true, (req, res, _access, scope) => work(req, res, scope));

  // The self-description is public (RFC 7644 §4 lets it be read without authentication), within the organization's limits.
  router.get(
    "/ServiceProviderConfig",
    handlePublic(async (_req, res, scope) =>
      send(res, 200, serviceProviderConfig(scope.endpoint))
    )
  );
  router.get(
    "/ResourceTypes",
    handlePublic(async (_req, res, scope) => {
      const types = resourceTypes(scope.endpoint);
      send(res, 200, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        totalResults: types.length,
        startIndex: 1,
        itemsPerPage: types.length,
        Resources: types,
      });
    })
  );
  router.get(
    "/ResourceTypes/:id",
    handlePublic(async (req, res, scope) => {
      const found = resourceTypes(scope.endpoint).find(
        (t) => t.id === req.params.id
      );
      if (!found) throw new ScimError(404, "No such resource type.");
      send(res, 200, found);
    })
  );
  router.get(
    "/Schemas",
    handlePublic(async (_req, res, scope) => {
      const all = schemas(scope.endpoint);
      send(res, 200, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        totalResults: all.length,
        startIndex: 1,
        itemsPerPage: all.length,
        Resources: all,
      });
    })
  );
  router.get(
    "/Schemas/:id",
    handlePublic(async (req, res, scope) => {
      const found = schemas(scope.endpoint).find((s) => s.id === req.params.id);
      if (!found) throw new ScimError(404, "No such schema.");
      send(res, 200, found);
    })
  );

  const created = (
    res: Response,
    resource: { meta: { location: string; version: string } }
  ) =>
    send(res, 201, resource, {
      Location: resource.meta.location,
      ETag: resource.meta.version,
    });
  const ok = (res: Response, resource: { meta: { version: string } }) =>
    send(res, 200, resource, { ETag: resource.meta.version });
  const query = (req: Request) => {
    const filter = req.query.filter;
    if (filter !== undefined && typeof filter !== "string")
      throw new ScimError(400, "filter must be given once.", "invalidFilter");
    return { filter, paging: pagingOf(req.query.startIndex, req.query.count) };
  };
  const id = (req: Request) => req.params.id!;

  router.get(
    "/Users",
    handle(async (req, res, access, scope) => {
      const { filter, paging } = query(req);
      send(
        res,
        200,
        await listScimUsers(asToken(req, access), scope, filter, paging)
      );
    })
  );
  router.post(
    "/Users",
    handle(async (req, res, access, scope) =>
      created(
        res,
        await createScimUser(
          asToken(req, access),
          scope,
          await readBody(req, res)
        )
      )
    )
  );
  router.get(
    "/Users/:id",
    handle(async (req, res, access, scope) =>
      ok(res, await getScimUser(asToken(req, access), scope, id(req)))
    )
  );
  router.put(
    "/Users/:id",
    handle(async (req, res, access, scope) => {
      const version = ifMatchVersion(req.get("if-match"));
      ok(
        res,
        await replaceScimUser(
          asToken(req, access),
          scope,
          id(req),
          await readBody(req, res),
          version
        )
      );
    })
  );
  router.patch(
    "/Users/:id",
    handle(async (req, res, access, scope) => {
      const version = ifMatchVersion(req.get("if-match"));
      ok(
        res,
        await patchScimUser(
          asToken(req, access),
          scope,
          id(req),
          await readBody(req, res),
          version
        )
      );
    })
  );
  router.delete(
    "/Users/:id",
    handle(async (req, res, access, scope) => {
      await deleteScimUser(
        asToken(req, access),
        scope,
        id(req),
        ifMatchVersion(req.get("if-match"))
      );
      res.status(204).set("Cache-Control", "no-store").end();
    })
  );

  router.get(
    "/Groups",
    handle(async (req, res, access, scope) => {
      const { filter, paging } = query(req);
      send(
        res,
        200,
        await listScimGroups(
          asToken(req, access),
          scope,
          filter,
          paging,
          withMembers(req)
        )
      );
    })
  );
  router.post(
    "/Groups",
    handle(async (req, res, access, scope) =>
      created(
        res,
        await createScimGroup(
          asToken(req, access),
          scope,
          await readBody(req, res)
        )
      )
    )
  );
  router.get(
    "/Groups/:id",
    handle(async (req, res, access, scope) =>
      ok(
        res,
        await getScimGroup(
          asToken(req, access),
          scope,
          id(req),
          withMembers(req)
        )
      )
    )
  );
  router.put(
    "/Groups/:id",
    handle(async (req, res, access, scope) => {
      const version = ifMatchVersion(req.get("if-match"));
      ok(
        res,
        await replaceScimGroup(
          asToken(req, access),
          scope,
          id(req),
          await readBody(req, res),
          version
        )
      );
    })
  );
  router.patch(
    "/Groups/:id",
    handle(async (req, res, access, scope) => {
      const version = ifMatchVersion(req.get("if-match"));
      ok(
        res,
        await patchScimGroup(
          asToken(req, access),
          scope,
          id(req),
          await readBody(req, res),
          version
        )
      );
    })
  );
  router.delete(
    "/Groups/:id",
    handle(async (req, res, access, scope) => {
      await deleteScimGroup(
        asToken(req, access),
        scope,
        id(req),
        ifMatchVersion(req.get("if-match"))
      );
      res.status(204).set("Cache-Control", "no-store").end();
    })
  );

  // Anything else below the endpoint (Bulk, /Me, an unknown resource) is a SCIM 404 or 501, not a page.
  router.all(
    "/Bulk",
    handle(async () => {
      throw new ScimError(501, "Bulk operations are not supported.");
    })
  );
  router.all(
    "*",
    handle(async () => {
      throw new ScimError(404, "There is no such SCIM resource here.");
    })
  );
  return router;
}
