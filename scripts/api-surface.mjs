// The package's public surface, read with the TypeScript checker: for every
// `exports` subpath of package.json, the names its entry module exports
// (re-exports followed, `export *` expanded) and each name's signature.
// Used by scripts/count-exports.mjs (the counts) and scripts/api-report.mjs
// (the committed report, api/berth.api.md).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ts = createRequire(import.meta.url)('typescript');

export const root = new URL('..', import.meta.url).pathname;

/** package.json's `exports`: subpath -> the source module behind it (./dist/src/a/index.js -> src/a/index.ts). */
export function entryPoints() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const out = [];
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'object' ? target.default : undefined;
    if (typeof file !== 'string' || !file.startsWith('./dist/src/')) continue;
    out.push({
      subpath: `berth${subpath.slice(1)}`,
      source: file.replace('./dist/', '').replace(/\.js$/, '.ts'),
    });
  }
  return out.sort((a, b) => a.subpath.localeCompare(b.subpath));
}

function program(files) {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram(
    files.map((f) => join(root, f)),
    { ...parsed.options, noEmit: true },
  );
}

const format =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType |
  ts.TypeFormatFlags.WriteArrayAsGenericType;

function kindOf(symbol) {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Variable) return 'const';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  if (f & ts.SymbolFlags.Namespace || f & ts.SymbolFlags.ValueModule) return 'namespace';
  return 'other';
}

/** Public members of a class or interface, one `name: type` line each, sorted. */
function membersOf(checker, type, node) {
  const lines = [];
  for (const prop of checker.getPropertiesOfType(type)) {
    const decl = prop.valueDeclaration ?? prop.declarations?.[0];
    if (decl !== undefined) {
      const mods = ts.getCombinedModifierFlags(decl);
      if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    }
    if (prop.name.startsWith('#') || prop.name.startsWith('__#')) continue;
    const optional = prop.flags & ts.SymbolFlags.Optional ? '?' : '';
    const readonly =
      decl !== undefined && ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Readonly ? 'readonly ' : '';
    const text =
      (decl !== undefined ? declaredText(checker, decl) : undefined) ??
      checker.typeToString(checker.getTypeOfSymbolAtLocation(prop, node), node, format);
    lines.push(`${readonly}${prop.name}${optional}: ${text}`);
  }
  return lines.sort();
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** A declaration's own text, comments dropped, on one line. */
function printed(node) {
  return printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile()).replace(/\s+/g, ' ').trim();
}

/** A parameter as written, without its default value (`name?: Type`). */
function parameterText(p) {
  const optional = p.questionToken !== undefined || p.initializer !== undefined ? '?' : '';
  return `${p.dotDotDotToken ? '...' : ''}${p.name.getText()}${optional}${p.type ? `: ${printed(p.type)}` : ''}`;
}

/** A signature as written in the source: `<T>(a: A, b?: B) => R`, the return type inferred where not written. */
function signatureText(checker, decl) {
  const typeParams = decl.typeParameters ? `<${decl.typeParameters.map(printed).join(', ')}>` : '';
  const params = decl.parameters.map(parameterText).join(', ');
  let returns = decl.type ? printed(decl.type) : undefined;
  if (returns === undefined) {
    const sig = checker.getSignatureFromDeclaration(decl);
    returns = sig ? checker.typeToString(checker.getReturnTypeOfSignature(sig), decl, format) : 'unknown';
  }
  return `${typeParams}(${params}) => ${returns}`;
}

/**
 * A declaration's type as its source writes it, so the report follows the code's own text (stable
 * across unrelated changes, which can reorder the checker's unions); undefined where no type is
 * written (the caller asks the checker).
 */
function declaredText(checker, decl) {
  if (ts.isMethodSignature(decl) || ts.isMethodDeclaration(decl) || ts.isFunctionDeclaration(decl))
    return signatureText(checker, decl);
  if (
    (ts.isPropertySignature(decl) ||
      ts.isPropertyDeclaration(decl) ||
      ts.isGetAccessorDeclaration(decl) ||
      ts.isVariableDeclaration(decl)) &&
    decl.type !== undefined
  )
    return printed(decl.type);
  return undefined;
}

/**
 * Machine-independent text: the checker writes a type not in scope at the entry as
 * import("/abs/path/file").Name, and a well-known symbol key as __@asyncDispose@123.
 */
function portable(line) {
  return line.replace(/import\("[^"]*"\)\./g, '').replace(/__@(\w+)@\d+/g, '[Symbol.$1]');
}

/** One exported name: its kind and a signature precise enough that a change to it shows in a diff. */
function describe(checker, exported, node) {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const kind = kindOf(symbol);
  const lines = [];
  if (kind === 'class') {
    const ctorType = checker.getTypeOfSymbolAtLocation(symbol, node);
    const ctors = (symbol.members?.get('__constructor')?.declarations ?? []).filter(
      (d) => ts.isConstructorDeclaration(d) && !ts.getCombinedModifierFlags(d) & ts.ModifierFlags.Private,
    );
    if (ctors.length > 0)
      for (const d of ctors) lines.push(`new(${d.parameters.map(parameterText).join(', ')})`);
    else
      for (const sig of ctorType.getConstructSignatures())
        lines.push(`new${checker.signatureToString(sig, node, format)}`);
    const instance = checker.getDeclaredTypeOfSymbol(symbol);
    lines.push(...membersOf(checker, instance, node));
    const statics = checker
      .getPropertiesOfType(ctorType)
      .filter((p) => p.name !== 'prototype')
      .map((p) => {
        const decl = p.valueDeclaration ?? p.declarations?.[0];
        const text =
          (decl !== undefined ? declaredText(checker, decl) : undefined) ??
          checker.typeToString(checker.getTypeOfSymbolAtLocation(p, node), node, format);
        return `static ${p.name}: ${text}`;
      });
    lines.push(...statics.sort());
  } else if (kind === 'interface') {
    const declared = checker.getDeclaredTypeOfSymbol(symbol);
    lines.push(...membersOf(checker, declared, node));
    for (const sig of declared.getCallSignatures()) lines.push(checker.signatureToString(sig, node, format));
  } else if (kind === 'type') {
    const declared = checker.getDeclaredTypeOfSymbol(symbol);
    const decl = symbol.declarations[0];
    lines.push(
      decl !== undefined && ts.isTypeAliasDeclaration(decl)
        ? `${decl.typeParameters ? `<${decl.typeParameters.map((p) => printed(p)).join(', ')}> ` : ''}= ${printed(decl.type)}`
        : checker.typeToString(declared, node, format | ts.TypeFormatFlags.InTypeAlias),
    );
  } else if (kind === 'enum') {
    lines.push(...checker.getExportsOfModule(symbol).map((m) => m.name));
  } else if (kind === 'namespace') {
    lines.push(
      ...checker
        .getExportsOfModule(symbol)
        .map((m) => m.name)
        .sort(),
    );
  } else if (kind === 'function') {
    const decls = (symbol.declarations ?? []).filter(ts.isFunctionDeclaration);
    // Overloads: the signatures callers see, not the implementation's.
    const visible = decls.length > 1 ? decls.filter((d) => d.body === undefined) : decls;
    for (const d of visible) lines.push(signatureText(checker, d));
  } else {
    const decl = symbol.valueDeclaration ?? symbol.declarations?.[0];
    lines.push(
      (decl !== undefined ? declaredText(checker, decl) : undefined) ??
        checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, node), node, format),
    );
  }
  return { name: exported.name, kind, lines: lines.map(portable) };
}

/**
 * The surface: per subpath, its exported names (sorted), each with kind and signature lines.
 * `withSignatures: false` skips the signatures (the counts need only the names).
 */
export function readSurface({ withSignatures = true } = {}) {
  const entries = entryPoints();
  const prog = program(entries.map((e) => e.source));
  const checker = prog.getTypeChecker();
  return entries.map(({ subpath, source }) => {
    const file = prog.getSourceFile(join(root, source));
    if (file === undefined) throw new Error(`${subpath}: ${source} is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(file);
    const exported = moduleSymbol === undefined ? [] : checker.getExportsOfModule(moduleSymbol);
    const names = exported
      .map((s) => (withSignatures ? describe(checker, s, file) : { name: s.name }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { subpath, source, names };
  });
}
