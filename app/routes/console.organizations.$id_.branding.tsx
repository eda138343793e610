import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useState, type CSSProperties, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm, type Console } from "~/.server/console/page";
import { detailErrors, text, zodFieldErrors } from "~/components/console/forms";
import { ConfirmAction, Csrf, Notice, SelectField, TextField } from "~/components/console/ui";
import { ASSET_KINDS, ASSET_MAX_BYTES, BrandingUpdateSchema, HEX_COLOR } from "~/schemas/branding";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Branding · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, branding] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("branding.getSettings", { params: { orgId } }),
  ]);
  if (!org.ok || !branding.ok) throw data({ message: "not_found" }, { status: 404 });
  return data({ org: org.body, branding: branding.body, version: branding.version!, done: new URL(args.request.url).searchParams.get("done") }, { headers: NO_STORE });
}

const TEXT_FIELDS = ["displayName", "primaryColor", "backgroundColor", "textColor", "footerText"] as const;

/** Empty fields remove a setting (null), as the Admin API's body means it. */
function settingsInput(form: FormData) {
  return Object.fromEntries(TEXT_FIELDS.map((f) => [f, text(form, f)?.trim() || null])) as Record<(typeof TEXT_FIELDS)[number], string | null>;
}

const UPLOAD_MAX_BYTES = ASSET_MAX_BYTES.logo + 64 * 1024;

/** A chosen file of the form, or null when none was chosen. */
function chosenFile(form: FormData): File | null {
  const file = form.get("file");
  return file instanceof File && file.size > 0 ? file : null;
}

async function uploadAsset(console: Console, orgId: string, form: FormData, file: File) {
  const kind = String(form.get("kind") ?? "");
  // Any other kind is the Admin API's to refuse (422 names the field).
  return console.admin("branding.uploadAsset", { params: { orgId }, query: { kind: kind as "logo" | "favicon" }, raw: { contentType: file.type || "application/octet-stream", bytes: await file.arrayBuffer() } });
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args, UPLOAD_MAX_BYTES);
  const orgId = args.params.id!;
  if (form.get("intent") === "upload") {
    const file = chosenFile(form);
    if (!file) return data({ errors: { file: "file" }, values: null }, { status: 422, headers: NO_STORE });
    const result = await uploadAsset(console, orgId, form, file);
    if (!result.ok) return data({ errors: { file: result.error.message }, values: null }, { status: result.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/branding?done=uploaded`);
  }
  if (form.get("intent") === "removeAsset") {
    const kind = String(form.get("kind") ?? "");
    // Only a forged form names another kind: the page offers these two.
    if (!(ASSET_KINDS as readonly string[]).includes(kind)) return data({ errors: { assets: "unknown_kind" } as Record<string, string>, values: null }, { status: 422, headers: NO_STORE });
    const version = Number(form.get("version"));
    const body = kind === "logo" ? { logoAssetId: null } : { faviconAssetId: null };
    const result = await console.admin("branding.updateSettings", { params: { orgId }, body, ifMatch: Number.isSafeInteger(version) ? version : undefined });
    if (result.ok) return redirect(`/console/organizations/${orgId}/branding?done=removed`);
    const errors: Record<string, string> = result.status === 409 ? { conflict: result.error.message } : { assets: result.error.message };
    return data({ errors, values: null }, { status: result.status, headers: NO_STORE });
  }
  const values = settingsInput(form);
  const parsed = BrandingUpdateSchema.safeParse(values);
  if (!parsed.success) return data({ errors: zodFieldErrors(parsed.error), values }, { status: 422, headers: NO_STORE });
  const version = Number(form.get("version"));
  const result = await console.admin("branding.updateSettings", { params: { orgId }, body: parsed.data, ifMatch: Number.isSafeInteger(version) ? version : undefined });
  if (result.ok) {
    // A file chosen beside the settings goes up with Save, after them (the upload changes the version they were checked against).
    const file = chosenFile(form);
    if (file) {
      const uploaded = await uploadAsset(console, orgId, form, file);
      if (!uploaded.ok) return data({ errors: { file: uploaded.error.message }, values }, { status: uploaded.status, headers: NO_STORE });
    }
    return redirect(`/console/organizations/${orgId}/branding?done=saved`);
  }
  const errors = result.status === 409 ? { conflict: result.error.message } : result.error.details ? detailErrors(result.error.details, TEXT_FIELDS) : { form: result.error.message };
  return data({ errors, values }, { status: result.status, headers: NO_STORE });
}

/** The organization's login page in small, drawn from the values in the form as they are typed. */
function LoginPreview({ name, colors, footer, logoUrl }: { name: string; colors: Record<string, string>; footer: string; logoUrl: string | null }) {
  const { t } = useTranslation("console");
  const valid = (c: string | undefined) => (c && HEX_COLOR.test(c) ? c : undefined);
  const style = {
    ...(valid(colors.primaryColor) ? { "--porta-primary": colors.primaryColor } : {}),
    ...(valid(colors.backgroundColor) ? { "--porta-bg": colors.backgroundColor } : {}),
    ...(valid(colors.textColor) ? { "--porta-text": colors.textColor } : {}),
  } as CSSProperties;
  return (
    <figure className="preview" style={style} aria-labelledby="preview-caption">
      <figcaption id="preview-caption">{t("branding.preview")}</figcaption>
      <div className="preview-page" aria-hidden="true">
        <div className="card">
          <div className="brand">{logoUrl ? <img src={logoUrl} alt="" className="brand-logo" /> : <p className="brand-name">{name}</p>}</div>
          <p className="preview-title">{t("branding.previewTitle", { name })}</p>
          <div className="preview-field" />
          <div className="preview-field" />
          <span className="button">{t("branding.previewButton")}</span>
        </div>
        {footer ? <p className="brand-footer">{footer}</p> : null}
      </div>
    </figure>
  );
}

export default function BrandingPage() {
  const { org, branding, version, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { pathname } = useLocation();
  const { t } = useTranslation("console");
  const initial = Object.fromEntries(TEXT_FIELDS.map((f) => [f, result?.values?.[f] ?? branding[f] ?? ""])) as Record<(typeof TEXT_FIELDS)[number], string>;
  const [live, setLive] = useState(initial);
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors: Record<string, string> = clientErrors ?? result?.errors ?? {};
  const set = (field: (typeof TEXT_FIELDS)[number]) => (value: string) => setLive((v) => ({ ...v, [field]: value }));

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = BrandingUpdateSchema.safeParse(settingsInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("branding.title")}</h1>
      {done ? <Notice kind="info">{t(`branding.done.${done}`)}</Notice> : null}
      {errors.conflict ? (
        <Notice kind="error">
          {t("orgs.conflict.text")} <a href={pathname}>{t("orgs.conflict.reload")}</a>
        </Notice>
      ) : null}
      <div className="grid branding-grid">
        <Form method="post" reloadDocument noValidate onSubmit={onSubmit} encType="multipart/form-data" className="panel form" aria-labelledby="settings-title">
          <h2 id="settings-title">{t("branding.settings")}</h2>
          {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
          <Csrf />
          <input type="hidden" name="intent" value="save" />
          <input type="hidden" name="version" value={version} />
          {TEXT_FIELDS.map((f) => (
            <TextField key={f} name={f} label={t(`branding.${f}`)} defaultValue={initial[f]} error={errors[f]} onChange={set(f)} hint={f.endsWith("Color") ? t("branding.colorHint") : undefined} />
          ))}
          <SelectField name="kind" label={t("branding.kind")} options={ASSET_KINDS.map((k) => ({ value: k, label: t(`branding.kinds.${k}`) }))} defaultValue="logo" />
          <div className="field">
            <label htmlFor="file">{t("branding.file")}</label>
            <input id="file" name="file" type="file" accept="image/png,image/jpeg,image/webp,image/svg+xml,image/x-icon" aria-describedby={errors.file ? "file-hint file-error" : "file-hint"} />
            <p id="file-hint" className="hint">
              {t("branding.fileWithSave")}
            </p>
            {errors.file ? <p id="file-error" className="field-error" role="alert">{errors.file === "file" ? t("branding.chooseFile") : errors.file}</p> : null}
          </div>
          <button type="submit" className="button button-inline">{t("common.save")}</button>
        </Form>
        <LoginPreview name={live.displayName || org.name} colors={live} footer={live.footerText} logoUrl={branding.logo?.url ?? null} />
      </div>
      <section className="panel" aria-labelledby="assets-title">
        <h2 id="assets-title">{t("branding.assets")}</h2>
        {errors.assets ? <Notice kind="error">{errors.assets === "unknown_kind" ? t("branding.unknownKind") : errors.assets}</Notice> : null}
        {ASSET_KINDS.map((kind) => {
          const asset = branding[kind];
          return (
            <div key={kind} className="asset-row">
              <h3>{t(`branding.kinds.${kind}`)}</h3>
              {asset ? (
                <>
                  <img src={asset.url} alt={t(`branding.kinds.${kind}`)} className="asset-thumb" />
                  <ConfirmAction intent="removeAsset" label={t("branding.remove")} question={t("branding.confirmRemove", { kind: t(`branding.kinds.${kind}`) })} fields={{ kind, version: String(version) }} danger />
                </>
              ) : (
                <p className="hint">{t("branding.noAsset")}</p>
              )}
            </div>
          );
        })}
      </section>
    </>
  );
}
