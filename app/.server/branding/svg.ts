import type * as Htmlparser2 from "htmlparser2";
import { requiredOnFirstUse } from "../lazy";
import { AppError } from "../errors";

/** Loaded with the first logo upload, not at every start (decision 056). */
const htmlparser2 = requiredOnFirstUse<typeof Htmlparser2>("htmlparser2");

/**
 * Rebuilds an uploaded SVG from an allowlist (docs/decisions/011-svg-sanitizing.md): the file is
 * parsed as XML and written out again with only known drawing elements and presentation
 * attributes, every value escaped. Scripts, event handlers, foreignObject, animation, external
 * references, javascript:/data: URLs, comments, DOCTYPEs and processing instructions do not
 * survive, because nothing is copied that was not rebuilt. The served bytes are this output.
 */
export class SvgRefusedError extends AppError {
  constructor(reason: string) {
    super(422, "validation_failed", reason, [{ field: "body", message: reason }]);
    this.name = "SvgRefusedError";
  }
}

const SVG_NS = "http://www.w3.org/2000/svg";
const XLINK_NS = "http://www.w3.org/1999/xlink";

const ELEMENTS = new Set([
  "svg", "g", "defs", "title", "desc", "symbol", "use", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
  "text", "tspan", "textPath", "linearGradient", "radialGradient", "stop", "clipPath", "mask", "pattern", "marker", "style",
  "filter", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feDropShadow", "feFlood", "feFuncA", "feFuncB",
  "feFuncG", "feFuncR", "feGaussianBlur", "feMerge", "feMergeNode", "feMorphology", "feOffset",
]);

const ATTRIBUTES = new Set([
  "id", "class", "style", "transform", "d", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "fr",
  "width", "height", "viewBox", "preserveAspectRatio", "points", "pathLength", "version", "href", "xlink:href",
  "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit",
  "stroke-dasharray", "stroke-dashoffset", "stroke-opacity", "opacity", "clip-path", "clip-rule", "mask", "filter",
  "color", "display", "visibility", "overflow", "vector-effect", "shape-rendering", "paint-order", "mix-blend-mode",
  "offset", "stop-color", "stop-opacity", "gradientUnits", "gradientTransform", "spreadMethod",
  "patternUnits", "patternContentUnits", "patternTransform", "clipPathUnits", "maskUnits", "maskContentUnits",
  "markerWidth", "markerHeight", "markerUnits", "refX", "refY", "orient", "filterUnits", "primitiveUnits",
  "in", "in2", "result", "stdDeviation", "mode", "operator", "k1", "k2", "k3", "k4", "type", "values", "tableValues",
  "slope", "intercept", "amplitude", "exponent", "radius", "dx", "dy", "flood-color", "flood-opacity",
  "font-family", "font-size", "font-weight", "font-style", "text-anchor", "dominant-baseline", "letter-spacing",
  "rotate", "textLength", "lengthAdjust", "startOffset", "xml:space", "role", "aria-label", "aria-hidden",
]);

/** Elements whose text is kept; elsewhere text is only whitespace between elements. */
const TEXT_ELEMENTS = new Set(["title", "desc", "text", "tspan", "textPath", "style"]);

const MAX_DEPTH = 64;

/** Removes what browsers ignore inside URL schemes (controls, blanks) before looking for one. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const compact = (value: string) => value.replace(/[\u0000-\u0020\u007f-\u00a0]/g, "").toLowerCase();

/** url(...) only to a fragment of this document; no scheme, no @import, no CSS escapes. */
function isSafeCss(value: string): boolean {
  const text = compact(value);
  if (/javascript:|data:|vbscript:|@import|expression\(|\\|<|behavior:|-moz-binding/.test(text)) return false;
  return [...text.matchAll(/url\(/g)].every((m) => /^url\(['"]?#/.test(text.slice(m.index)));
}

function safeAttribute(element: string, name: string, value: string): boolean {
  if (!ATTRIBUTES.has(name)) return false;
  if (name === "href" || name === "xlink:href") return element !== "svg" && /^#[A-Za-z_][\w.:-]*$/.test(value.trim());
  return isSafeCss(value);
}

const escapeAttribute = (value: string) => value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const escapeText = (value: string) => value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

interface Open {
  name: string;
  /** False when the element was dropped with everything inside it. */
  kept: boolean;
  /** Text of a <style> element, checked as a whole when it closes. */
  css?: string;
}

export function sanitizeSvg(input: string): string {
  const out: string[] = [];
  const stack: Open[] = [];
  let dropping = 0;
  let rootSeen = false;
  let rootClosed = false;
  let tooDeep = false;

  const parser = new (htmlparser2().Parser)(
    {
      onopentag(name, attributes) {
        if (stack.length >= MAX_DEPTH) tooDeep = true;
        const isRoot = !rootSeen;
        rootSeen = true;
        const kept = dropping === 0 && !rootClosed && !tooDeep && ELEMENTS.has(name) && (!isRoot || name === "svg");
        stack.push({ name, kept, ...(name === "style" ? { css: "" } : {}) });
        if (!kept) {
          dropping++;
          return;
        }
        const written = isRoot ? [` xmlns="${SVG_NS}"`, ` xmlns:xlink="${XLINK_NS}"`] : [];
        for (const [attribute, value] of Object.entries(attributes)) {
          if (safeAttribute(name, attribute, value)) written.push(` ${attribute}="${escapeAttribute(value)}"`);
        }
        out.push(`<${name}${written.join("")}>`);
      },
      ontext(text) {
        const current = stack.at(-1);
        if (dropping > 0 || !current) return;
        if (current.css !== undefined) current.css += text;
        else if (TEXT_ELEMENTS.has(current.name) || text.trim() === "") out.push(escapeText(text));
      },
      onclosetag() {
        const closed = stack.pop();
        if (!closed) return;
        if (!closed.kept) {
          dropping--;
          return;
        }
        if (closed.css !== undefined && isSafeCss(closed.css)) out.push(escapeText(closed.css));
        out.push(`</${closed.name}>`);
        if (stack.length === 0) rootClosed = true;
      },
    },
    { xmlMode: true, decodeEntities: true, recognizeSelfClosing: true },
  );
  parser.write(input);
  parser.end();

  if (tooDeep) throw new SvgRefusedError(`The SVG nests elements deeper than ${MAX_DEPTH} levels.`);
  if (out.length === 0 || !out[0]!.startsWith("<svg")) throw new SvgRefusedError("The file is not an SVG image: its root element must be <svg>.");
  return out.join("");
}
