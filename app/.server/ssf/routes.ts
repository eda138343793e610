import express, { type Request, type Response, type Router } from "express";
import type { z } from "zod";
import { findUnrepresentable } from "~/schemas/text";
import { MAX_JSON_DEPTH, textNestsDeeperThan } from "~/schemas/json-depth";
import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";
import { readContext, stagedContext, type Actor } from "../context";
import { toAppError } from "../db/errors";
import { RETRY_AFTER_SECONDS } from "../errors";
import type { Services } from "../services";
import { requireSsfAccess, requireSsfOrganization, type SsfOrganization } from "./access";
import { SsfError } from "./errors";
import {
  addSubject,
  createStream,
  deleteStream,
  getStatus,
  getStream,
  listStreams,
  poll,
  removeSubject,
  requestVerification,
  setStatus,
  updateStream,
  type SsfAccess,
} from "./streams";
import { describeIssues, POLL, PUSH, PollSchema, StatusWriteSchema, StreamPatchSchema, StreamWriteSchema, SubjectWriteSchema, VerificationSchema } from "./subjects";

/**
 * The Shared Signals transmitter's door (SSF 1.0, decision 093), like the SCIM door: under the
 * organization, `/{slug}/.well-known/ssf-configuration` (also at the path-inserted
 * `/.well-known/ssf-configuration/{slug}`) is public; `/{slug}/ssf/...` takes a client's access
 * token for the transmitter (access.ts), reads JSON bodies within bounds, and hands the services
 * a context acting as that client. Every refusal is an OAuth-style error body.
 */
export const MAX_SSF_BODY_BYTES = 64 * 1024;

const parseJson = express.json({
  limit: MAX_SSF_BODY_BYTES,
  type: () => true,
  strict: true,
  // Too deep a nesting is refused before the text is parsed (~/schemas/json-depth).
  verify: (_req, _res, buffer) => {
    if (textNestsDeeperThan(buffer.toString("utf8"))) throw new SsfError(400, "invalid_request", `The body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`);
  },
});

function bearerOf(req: Request): string | undefined {
  return /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(req.get("authorization") ?? "")?.[1];
}

function send(res: Response, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.status(status).set({ "Cache-Control": "no-store", ...headers }).type("application/json").send(JSON.stringify(body));
}

/** A JSON body within the size and depth limits, storable text only, in the shape `schema` says. */
function readBody<S extends z.ZodType>(req: Request, res: Response, schema: S): Promise<z.output<S>> {
  if (!req.is("application/json")) return Promise.reject(new SsfError(415, "invalid_request", "Send the body as application/json."));
  return new Promise((resolve, reject) => {
    parseJson(req, res, (error?: unknown) => {
      if (error) {
        const type = (error as { type?: string }).type;
        if (type === "entity.too.large") return reject(new SsfError(413, "invalid_request", `The body is larger than ${MAX_SSF_BODY_BYTES} bytes.`, { Connection: "close" }));
        if (error instanceof SsfError) return reject(error);
        if (type === "entity.verify.failed") return reject(new SsfError(400, "invalid_request", `The body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`));
        return reject(new SsfError(400, "invalid_request", "The body is not valid JSON."));
      }
      const at = findUnrepresentable(req.body);
      if (at !== undefined) return reject(new SsfError(400, "invalid_request", `${at || "The body"} contains a character that cannot be stored (NUL or an unpaired surrogate).`));
      const parsed = schema.safeParse(req.body);
      if (!parsed.success) return reject(new SsfError(400, "invalid_request", describeIssues(parsed.error)));
      resolve(parsed.data);
    });
  });
}

const streamIdOf = (req: Request): string => {
  const value = req.query.stream_id;
  if (typeof value !== "string" || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) throw new SsfError(404, "not_found", "There is no such stream.");
  return value;
};

/** A service's error as the door answers it. */
function ssfErrorOf(error: unknown): SsfError | null {
  if (error instanceof SsfError) return error;
  const app = toAppError(error);
  if (!app) return null;
  if (app.status === 503) return new SsfError(503, "temporarily_unavailable", "Porta cannot reach its database right now. Try again shortly.", { "Retry-After": String(RETRY_AFTER_SECONDS) });
  return new SsfError(app.status, app.code, app.message);
}

/** The transmitter configuration metadata (SSF 1.0 §7.1) of one organization. */
export function ssfConfigurationOf(org: SsfOrganization) {
  const base = `${org.issuer}/ssf`;
  return {
    spec_version: "1_0",
    issuer: org.issuer,
    jwks_uri: `${org.issuer}/.well-known/jwks`,
    delivery_methods_supported: [PUSH, POLL],
    configuration_endpoint: `${base}/streams`,
    status_endpoint: `${base}/status`,
    add_subject_endpoint: `${base}/subjects/add`,
    remove_subject_endpoint: `${base}/subjects/remove`,
    verification_endpoint: `${base}/verify`,
    authorization_schemes: [{ spec_urn: "urn:ietf:rfc:6749" }],
    // A stream hears of no one until its receiver adds subjects: decision 093.
    default_subjects: "NONE",
  };
}

type Serve = (req: Request, res: Response, next: (error?: unknown) => void) => void;

export function ssfRoutes(services: Services): { streams: Router; configuration: Serve } {
  const meta = (req: Request) => ({ ip: req.ip ?? null, requestId: (req.res?.locals.requestId as string | undefined) ?? null });
  const asClient = (req: Request, access: SsfAccess) => {
    const actor: Actor = { type: "client", id: access.clientId, ...meta(req) };
    return stagedContext(services, actor);
  };

  const answerError = (res: Response, next: (error?: unknown) => void) => (error: unknown) => {
    const ssf = ssfErrorOf(error);
    if (ssf && !res.headersSent) return send(res, ssf.status, ssf.toBody(), ssf.headers);
    if (res.headersSent) return next(error);
    services.logger.error({ err: error }, "unhandled error");
    const requestId = (res.locals.requestId as string | undefined) ?? "";
    send(res, 500, { error: "server_error", error_description: `Something went wrong. Quote the request id ${requestId} when you report it.` });
  };

  const configuration: Serve = (req, res, next) => {
    const slug = (req.params as { slug?: string }).slug ?? "";
    if (!SLUG_PATTERN_ANY_CASE.test(slug)) return next();
    (async () => {
      const org = await requireSsfOrganization(readContext(services, { type: "anonymous", id: null, ...meta(req) }), slug);
      send(res, 200, ssfConfigurationOf(org), { "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" });
    })().catch(answerError(res, next));
  };

  /** Counts a request against a limit; over it, 429 with Retry-After. */
  const within = async (limit: "ssfIp" | "ssfClient", key: string, by: string) => {
    const result = await services.limits.consume(limit, key);
    if (!result.allowed) throw new SsfError(429, "slow_down", `Too many requests ${by}; try again later.`, { "Retry-After": String(result.retryAfterSeconds) });
  };

  type Work = (req: Request, res: Response, access: SsfAccess) => Promise<void>;
  const handle =
    (work: Work): Serve =>
    (req, res, next) => {
      const slug = (req.params as { slug?: string }).slug ?? "";
      if (!SLUG_PATTERN_ANY_CASE.test(slug)) return next();
      (async () => {
        await within("ssfIp", `${slug.toLowerCase()}:${req.ip ?? "unknown"}`, "from this address");
        const access = await requireSsfAccess(readContext(services, { type: "anonymous", id: null, ...meta(req) }), slug, bearerOf(req));
        await within("ssfClient", `${access.organizationId}:${access.clientId}`, "by this client");
        await work(req, res, access);
      })().catch(answerError(res, next));
    };

  const router = express.Router({ mergeParams: true });
  router.post(
    "/streams",
    handle(async (req, res, access) => send(res, 201, await createStream(asClient(req, access), access, await readBody(req, res, StreamWriteSchema)))),
  );
  router.get(
    "/streams",
    handle(async (req, res, access) => {
      const ctx = asClient(req, access);
      send(res, 200, req.query.stream_id === undefined ? await listStreams(ctx, access) : await getStream(ctx, access, streamIdOf(req)));
    }),
  );
  router.patch(
    "/streams",
    handle(async (req, res, access) => send(res, 200, await updateStream(asClient(req, access), access, await readBody(req, res, StreamPatchSchema), false))),
  );
  router.put(
    "/streams",
    handle(async (req, res, access) => {
      const body = await readBody(req, res, StreamWriteSchema);
      if (!body.stream_id) throw new SsfError(400, "invalid_request", "stream_id: is required");
      send(res, 200, await updateStream(asClient(req, access), access, { ...body, stream_id: body.stream_id }, true));
    }),
  );
  router.delete(
    "/streams",
    handle(async (req, res, access) => {
      await deleteStream(asClient(req, access), access, streamIdOf(req));
      res.status(204).set("Cache-Control", "no-store").end();
    }),
  );
  router.get(
    "/status",
    handle(async (req, res, access) => send(res, 200, await getStatus(asClient(req, access), access, streamIdOf(req)))),
  );
  router.post(
    "/status",
    handle(async (req, res, access) => send(res, 200, await setStatus(asClient(req, access), access, await readBody(req, res, StatusWriteSchema)))),
  );
  router.post(
    "/subjects/add",
    handle(async (req, res, access) => {
      await addSubject(asClient(req, access), access, await readBody(req, res, SubjectWriteSchema));
      res.status(200).set("Cache-Control", "no-store").end();
    }),
  );
  router.post(
    "/subjects/remove",
    handle(async (req, res, access) => {
      await removeSubject(asClient(req, access), access, await readBody(req, res, SubjectWriteSchema));
      res.status(204).set("Cache-Control", "no-store").end();
    }),
  );
  router.post(
    "/verify",
    handle(async (req, res, access) => {
      const body = await readBody(req, res, VerificationSchema);
      await requestVerification(asClient(req, access), access, body.stream_id, body.state);
      res.status(204).set("Cache-Control", "no-store").end();
    }),
  );
  router.post(
    "/poll/:streamId",
    handle(async (req, res, access) => {
      const streamId = req.params.streamId ?? "";
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(streamId)) throw new SsfError(404, "not_found", "There is no such stream.");
      send(res, 200, await poll(asClient(req, access), access, streamId, await readBody(req, res, PollSchema)));
    }),
  );
  router.all(
    "*",
    handle(async () => {
      throw new SsfError(404, "not_found", "There is no such Shared Signals endpoint.");
    }),
  );
  return { streams: router, configuration };
}
