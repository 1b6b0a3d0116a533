package mutants

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
)

// What a lab's claims can read is derived from their source, not listed by
// hand: a list beside the claims would rot the day a claim starts reading
// another stream, and an equivalent mutant would hide a real gap.
//
// Why static and not recorded at run time: the claims read the Record's
// fields directly (rec.PodEvents, rec.Containers …), not through accessors
// a wrapper could count, and a field one run's decide did not touch may be
// touched on another record (a branch not taken here). A read that code
// cannot reach on any record is what "provably cannot reach a claim's
// input" asks for, so the analysis over-approximates:
//
//   - The functions the lab's Decide can reach: its own function, then every
//     function or method any reached function so much as names (a call, a
//     function value stored or passed, a method value), every method of the
//     same name for a call through an interface, and, for each package
//     variable a reached function uses, what its initialiser names (tables
//     of rules and their functions) and every function that assigns to it;
//     for each type a reached function names, and the types its
//     declaration names, every method of it that an interface declared
//     outside the module has (code outside may call it: sort.Sort calls
//     Less, fmt calls String).
//   - A field of evidence.Record is read when a reached function selects it
//     (rec.Containers, a copy's field, a method of Record that does).
//   - The whole Record counts as read when a reached function hands a Record
//     (or *Record) to a function outside this module (encoding/json, fmt,
//     reflect), converts it to another type (unsafe.Pointer), or stores it
//     where an interface is wanted (an argument, a variable, a result, an
//     element, a channel): reflection could read any field from there, and
//     what happens there is not followed. A call through a function value needs
//     no such care: a function that takes a Record is written in this
//     module, and whatever made the value named it (or wrote it as a
//     closure inside a reached function), so it is reached anyway.
//
// The one thing it cannot see is what it is not shown: code built from
// other sources than this module's packages (cgo, assembly), which the
// claims do not use. A field no reached function selects cannot affect a
// claim's verdict, so a mutant that changes only such fields is equivalent.

// recordType is evidence.Record's full name, as go/types writes it.
var recordType = reflect.TypeFor[evidence.Record]().PkgPath() + ".Record"

// modulePath is this module's path: the packages whose source is analysed.
var modulePath = strings.TrimSuffix(reflect.TypeFor[evidence.Record]().PkgPath(), "/internal/evidence")

// allFields stands for every field of the Record (it left the module).
const allFields = "*"

// graph is the module's functions: what each names and which of the
// Record's fields it reads.
type graph struct {
	edges map[string][]string // node → nodes it names
	reads map[string][]string // node → Record fields it selects (allFields: all)
	// methods are the module's methods by name, for calls through an interface.
	methods map[string][]string
	// typeMethods are each module type's methods; external are the names
	// of the methods of interfaces declared outside the module: of a type
	// a reached function names, those are the methods code outside may
	// call (sort.Sort calls Less, fmt calls String).
	typeMethods map[string][]typeMethod
	external    map[string]bool
}

type typeMethod struct{ name, node string }

var (
	graphOnce sync.Once
	theGraph  *graph
	graphErr  error
)

// staticReads is readsOf once the module is analysed: the Record fields
// the lab's Decide can reach.
func staticReads(root string, def lab.Definition) (map[string]bool, error) {
	graphOnce.Do(func() { theGraph, graphErr = analyse(root) })
	if graphErr != nil {
		return nil, graphErr
	}
	return theGraph.readsFrom(funcKey(def.Claims))
}

func init() { readsOf = staticReads }

// funcKey names a Go function the way go/types' FullName does:
// "github.com/termlab/termlab/labs/force.Claims", "(*pkg.T).M" for a
// method value. A closure is named by the function it is written in (its
// body is analysed as part of it).
func funcKey(f any) string {
	name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	name = closureSuffix.ReplaceAllString(name, "")
	if m := methodValue.FindStringSubmatch(name); m != nil {
		return "(" + m[2] + m[1] + "." + m[3] + ")." + m[4]
	}
	return name
}

var (
	closureSuffix = regexp.MustCompile(`(\.func\d+)+$`)
	// methodValue is the runtime's name of a method, pkg.(*T).M, and of a
	// method value, pkg.(*T).M-fm.
	methodValue = regexp.MustCompile(`^(.*)\.\((\*?)([^.()]+)\)\.([^.]+?)(?:-fm)?$`)
)

// readsFrom are the fields read by the functions reachable from root.
func (g *graph) readsFrom(root string) (map[string]bool, error) {
	if _, ok := g.edges[root]; !ok {
		return nil, fmt.Errorf("mutants: %s is not a function of this module's source", root)
	}
	seen := map[string]bool{root: true}
	queue := []string{root}
	out := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, f := range g.reads[n] {
			if f == allFields {
				for _, f := range reflect.VisibleFields(reflect.TypeFor[evidence.Record]()) {
					if f.IsExported() {
						out[f.Name] = true
					}
				}
				continue
			}
			if ast.IsExported(f) {
				out[f] = true
			}
		}
		next := g.edges[n]
		for _, e := range g.edges[n] {
			if m, ok := strings.CutPrefix(e, "method:"); ok {
				next = append(next, g.methods[m]...)
			}
		}
		for _, m := range g.typeMethods[n] {
			if g.external[m.name] {
				next = append(next, m.node)
			}
		}
		for _, e := range next {
			if !seen[e] {
				seen[e] = true
				queue = append(queue, e)
			}
		}
	}
	return out, nil
}

// listed is one package as go list -json writes it.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Standard   bool
}

// analyse type-checks the module's non-test packages that the labs build
// from (their imports from their export data, which go list -export
// builds or finds in the build cache) and records each function's names
// and Record reads.
func analyse(root string) (*graph, error) {
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,Standard", "./labs/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export ./labs/...: %w: %s", err, stderr.String())
	}
	exports := map[string]string{}
	var mine []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if !p.Standard && (p.ImportPath == modulePath || strings.HasPrefix(p.ImportPath, modulePath+"/")) {
			mine = append(mine, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	g := &graph{edges: map[string][]string{}, reads: map[string][]string{}, methods: map[string][]string{},
		typeMethods: map[string][]typeMethod{}, external: map[string]bool{}}
	seenPkg := map[*types.Package]bool{}
	for _, p := range mine {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
		pkg, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
		if err != nil {
			return nil, fmt.Errorf("type-checking %s: %w", p.ImportPath, err)
		}
		g.noteInterfaces(pkg, seenPkg)
		for _, f := range files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					fn := info.Defs[d.Name].(*types.Func)
					node := fn.FullName()
					if d.Recv != nil {
						g.methods[fn.Name()] = append(g.methods[fn.Name()], node)
						// Whoever has a value of the type may have its
						// methods called by code outside the module
						// (sort.Sort calling Less, fmt calling String).
						recv := fn.Type().(*types.Signature).Recv().Type()
						if p, ok := recv.(*types.Pointer); ok {
							recv = p.Elem()
						}
						if n, ok := recv.(*types.Named); ok {
							t := typeNode(n.Origin().Obj())
							g.typeMethods[t] = append(g.typeMethods[t], typeMethod{fn.Name(), node})
						}
					}
					if d.Recv == nil && d.Name.Name == "init" {
						node = "init:" + pkg.Path()
					}
					g.edges[node] = append(g.edges[node], []string{}...)
					visit(g, node, d, info)
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch spec := spec.(type) {
						case *ast.ValueSpec:
							if d.Tok != token.VAR {
								continue
							}
							for _, name := range spec.Names {
								node := varNode(info.Defs[name].(*types.Var))
								for _, v := range spec.Values {
									visit(g, node, v, info)
								}
							}
						case *ast.TypeSpec:
							// A type's fields' types come with it: their
							// methods may be called on it by code outside.
							visit(g, typeNode(info.Defs[spec.Name].(*types.TypeName)), spec.Type, info)
						}
					}
				}
			}
		}
	}
	return g, nil
}

// noteInterfaces adds the method names of the interfaces that the
// packages pkg imports, outside the module, declare.
func (g *graph) noteInterfaces(pkg *types.Package, seen map[*types.Package]bool) {
	for _, p := range pkg.Imports() {
		if seen[p] {
			continue
		}
		seen[p] = true
		if !inModule(p) {
			for _, name := range p.Scope().Names() {
				if it, ok := p.Scope().Lookup(name).Type().Underlying().(*types.Interface); ok {
					for i := range it.NumMethods() {
						g.external[it.Method(i).Name()] = true
					}
				}
			}
		}
		g.noteInterfaces(p, seen)
	}
}

// visit records what one declaration names and which Record fields it reads.
func visit(g *graph, node string, d ast.Node, info *types.Info) {
	var funcs []*types.Signature // the enclosing functions, innermost last
	var stack []ast.Node
	all := func() { g.reads[node] = append(g.reads[node], allFields) }
	ast.Inspect(d, func(n ast.Node) bool {
		if n == nil {
			if _, ok := stack[len(stack)-1].(*ast.FuncLit); ok {
				funcs = funcs[:len(funcs)-1]
			} else if _, ok := stack[len(stack)-1].(*ast.FuncDecl); ok {
				funcs = funcs[:len(funcs)-1]
			}
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncDecl:
			funcs = append(funcs, info.Defs[n.Name].Type().(*types.Signature))
		case *ast.FuncLit:
			funcs = append(funcs, info.Types[n].Type.(*types.Signature))
		case *ast.Ident:
			switch o := info.Uses[n].(type) {
			case *types.Func:
				o = o.Origin()
				if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
					g.edges[node] = append(g.edges[node], "method:"+o.Name())
				} else if inModule(o.Pkg()) {
					g.edges[node] = append(g.edges[node], o.FullName())
				}
			case *types.Var:
				if packageVar(o) {
					g.edges[node] = append(g.edges[node], varNode(o))
				}
			case *types.TypeName:
				if inModule(o.Pkg()) && o.Parent() == o.Pkg().Scope() {
					g.edges[node] = append(g.edges[node], typeNode(o))
				}
			}
		case *ast.AssignStmt:
			// Whatever a function stores in a package variable is reached
			// by whoever reads the variable: the whole function counts.
			for _, l := range n.Lhs {
				if v, ok := rootVar(l, info); ok {
					g.edges[varNode(v)] = append(g.edges[varNode(v)], node)
				}
			}
			if len(n.Lhs) == len(n.Rhs) {
				for i := range n.Rhs {
					if boxes(info, n.Rhs[i], typeOf(info, n.Lhs[i])) {
						all()
					}
				}
			}
		case *ast.ValueSpec:
			if n.Type != nil {
				for _, v := range n.Values {
					if boxes(info, v, typeOf(info, n.Type)) {
						all()
					}
				}
			}
		case *ast.ReturnStmt:
			if len(funcs) > 0 && funcs[len(funcs)-1].Results().Len() == len(n.Results) {
				for i, r := range n.Results {
					if boxes(info, r, funcs[len(funcs)-1].Results().At(i).Type()) {
						all()
					}
				}
			}
		case *ast.SendStmt:
			if ch, ok := typeOf(info, n.Chan).Underlying().(*types.Chan); ok && boxes(info, n.Value, ch.Elem()) {
				all()
			}
		case *ast.CompositeLit:
			if compositeBoxes(info, n) {
				all()
			}
		case *ast.SelectorExpr:
			if s := info.Selections[n]; s != nil && s.Kind() == types.FieldVal {
				if f, ok := recordField(s); ok {
					g.reads[node] = append(g.reads[node], f)
				}
			}
		case *ast.CallExpr:
			if leavesModule(n, info) || argsBox(info, n) {
				all()
			}
		}
		return true
	})
}

// typeOf is the expression's type (types.Typ[types.Invalid] when unknown).
func typeOf(info *types.Info, e ast.Expr) types.Type {
	if tv, ok := info.Types[e]; ok && tv.Type != nil {
		return tv.Type
	}
	if id, ok := e.(*ast.Ident); ok {
		if o := info.ObjectOf(id); o != nil {
			return o.Type()
		}
	}
	return types.Typ[types.Invalid]
}

// boxes: a Record (or *Record) is stored where an interface is wanted,
// from where reflection could read any of its fields.
func boxes(info *types.Info, e ast.Expr, to types.Type) bool {
	return isRecord(typeOf(info, e)) && types.IsInterface(to)
}

// argsBox: the call passes a Record to a parameter of interface type.
func argsBox(info *types.Info, call *ast.CallExpr) bool {
	sig, ok := typeOf(info, call.Fun).Underlying().(*types.Signature)
	if !ok {
		return false
	}
	for i, a := range call.Args {
		var p types.Type
		switch {
		case sig.Variadic() && i >= sig.Params().Len()-1:
			p = sig.Params().At(sig.Params().Len() - 1).Type()
			if !call.Ellipsis.IsValid() {
				p = p.(*types.Slice).Elem()
			}
		case i < sig.Params().Len():
			p = sig.Params().At(i).Type()
		default:
			continue
		}
		if boxes(info, a, p) {
			return true
		}
	}
	return false
}

// compositeBoxes: a composite literal puts a Record in an interface
// element, key or field.
func compositeBoxes(info *types.Info, lit *ast.CompositeLit) bool {
	t := typeOf(info, lit)
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	for i, e := range lit.Elts {
		var key ast.Expr
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			key, e = kv.Key, kv.Value
		}
		switch u := t.Underlying().(type) {
		case *types.Slice:
			if boxes(info, e, u.Elem()) {
				return true
			}
		case *types.Array:
			if boxes(info, e, u.Elem()) {
				return true
			}
		case *types.Map:
			if boxes(info, e, u.Elem()) || (key != nil && boxes(info, key, u.Key())) {
				return true
			}
		case *types.Struct:
			var f *types.Var
			if id, ok := key.(*ast.Ident); ok {
				for j := range u.NumFields() {
					if u.Field(j).Name() == id.Name {
						f = u.Field(j)
					}
				}
			} else if key == nil && i < u.NumFields() {
				f = u.Field(i)
			}
			if f != nil && boxes(info, e, f.Type()) {
				return true
			}
		}
	}
	return false
}

func packageVar(v *types.Var) bool {
	return inModule(v.Pkg()) && v.Parent() == v.Pkg().Scope()
}

func typeNode(t *types.TypeName) string { return "type:" + t.Pkg().Path() + "." + t.Name() }

func varNode(v *types.Var) string { return "var:" + v.Pkg().Path() + "." + v.Name() }

// rootVar is the package variable an assignment's left side stores into
// (x, x.f, x[i], *x …).
func rootVar(e ast.Expr, info *types.Info) (*types.Var, bool) {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			v, ok := info.Uses[x].(*types.Var)
			return v, ok && packageVar(v)
		case *ast.SelectorExpr:
			if _, ok := info.Uses[x.Sel].(*types.Var); ok && info.Selections[x] == nil {
				e = x.Sel // pkg.Var
				continue
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return nil, false
		}
	}
}

// recordField: the selection ends in a field of evidence.Record.
func recordField(s *types.Selection) (string, bool) {
	t := s.Recv()
	path := s.Index()
	for i, idx := range path {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return "", false
		}
		f := st.Field(idx)
		if i == len(path)-1 {
			return f.Name(), isRecord(t)
		}
		t = f.Type()
	}
	return "", false
}

func isRecord(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path()+"."+n.Obj().Name() == recordType
}

// leavesModule: the call hands a Record (or *Record) to a function outside
// the module, or converts one to another type.
func leavesModule(call *ast.CallExpr, info *types.Info) bool {
	hasRecord := false
	for _, a := range call.Args {
		if tv, ok := info.Types[a]; ok && isRecord(tv.Type) {
			hasRecord = true
		}
	}
	if !hasRecord {
		return false
	}
	if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
		return !isRecord(tv.Type) // a conversion
	}
	var id *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr: // a generic function instantiated
		switch g := f.X.(type) {
		case *ast.Ident:
			id = g
		case *ast.SelectorExpr:
			id = g.Sel
		}
	}
	switch o := info.Uses[id].(type) {
	case *types.Func:
		return !inModule(o.Pkg())
	case *types.Builtin:
		return false // len, append …: they read nothing a selection did not
	}
	// A function value (a variable, a parameter, a field, a call's
	// result): a function that takes a Record is written in this module,
	// and whatever made the value named it or wrote it as a closure, so
	// it is reached through that.
	return false
}

func inModule(p *types.Package) bool {
	return p != nil && (p.Path() == modulePath || strings.HasPrefix(p.Path(), modulePath+"/"))
}
