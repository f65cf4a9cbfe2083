package configs

import (
	"fmt"
	"maps"
	"reflect"
	"text/template"
	"text/template/parse"
)

// templateFields finds a field the data cannot have (`.Event.Typ`) anywhere
// in t, also in branches that zero values skip: `{{if .Event.Type}}` or
// `{{range .Record.Headers}}` around it passes an execution on zero values,
// then fails on every record that takes the branch. It follows dot and
// variables by type through with, range and template calls; where a type
// is not known (a map of any, a function's result) it checks nothing.
func templateFields(t *template.Template, root reflect.Type) error {
	c := fieldCheck{t: t, root: root, seen: map[string]bool{}}
	return c.tree(t, root)
}

type fieldCheck struct {
	t    *template.Template
	root reflect.Type
	seen map[string]bool // template name and dot type already checked: recursion ends
}

// vars are the types of the variables in scope; nil for one not known.
type vars map[string]reflect.Type

func (c *fieldCheck) tree(t *template.Template, dot reflect.Type) error {
	key := t.Name() + "\x00" + fmt.Sprint(dot)
	if t.Tree == nil || c.seen[key] {
		return nil
	}
	c.seen[key] = true
	return c.list(t, t.Tree.Root, dot, vars{"$": dot})
}

func (c *fieldCheck) list(t *template.Template, l *parse.ListNode, dot reflect.Type, vs vars) error {
	if l == nil {
		return nil
	}
	for _, n := range l.Nodes {
		if err := c.node(t, n, dot, vs); err != nil {
			return err
		}
	}
	return nil
}

func (c *fieldCheck) node(t *template.Template, n parse.Node, dot reflect.Type, vs vars) error {
	switch n := n.(type) {
	case *parse.ActionNode:
		_, err := c.pipe(t, n.Pipe, dot, vs)
		return err
	case *parse.IfNode:
		return c.branch(t, &n.BranchNode, dot, vs, func(typ reflect.Type) (reflect.Type, reflect.Type, reflect.Type) { return dot, typ, typ })
	case *parse.WithNode:
		return c.branch(t, &n.BranchNode, dot, vs, func(typ reflect.Type) (reflect.Type, reflect.Type, reflect.Type) { return typ, typ, typ })
	case *parse.RangeNode:
		return c.branch(t, &n.BranchNode, dot, vs, func(typ reflect.Type) (reflect.Type, reflect.Type, reflect.Type) {
			k, e := rangeTypes(typ)
			return e, k, e
		})
	case *parse.TemplateNode:
		var typ reflect.Type
		if n.Pipe != nil {
			var err error
			if typ, err = c.pipe(t, n.Pipe, dot, vs); err != nil {
				return err
			}
		}
		if called := c.t.Lookup(n.Name); called != nil && typ != nil {
			return c.tree(called, typ)
		}
	}
	return nil
}

// branch checks an if, with or range: body gives the dot inside, and the
// types of its first and last declared variable, from the pipeline's type.
// The else list runs with the dot outside; both have scopes of their own.
func (c *fieldCheck) branch(t *template.Template, b *parse.BranchNode, dot reflect.Type, vs vars, body func(reflect.Type) (inner, first, last reflect.Type)) error {
	inner := maps.Clone(vs)
	typ, err := c.pipeValue(t, b.Pipe, dot, inner)
	if err != nil {
		return err
	}
	in, first, last := body(typ)
	if len(b.Pipe.Decl) > 0 && !b.Pipe.IsAssign {
		inner[b.Pipe.Decl[0].Ident[0]] = first
		inner[b.Pipe.Decl[len(b.Pipe.Decl)-1].Ident[0]] = last
	}
	if err := c.list(t, b.List, in, inner); err != nil {
		return err
	}
	return c.list(t, b.ElseList, dot, maps.Clone(vs))
}

// pipe checks p, declares or assigns its variables in vs, and returns the
// type of its value (nil if not known).
func (c *fieldCheck) pipe(t *template.Template, p *parse.PipeNode, dot reflect.Type, vs vars) (reflect.Type, error) {
	typ, err := c.pipeValue(t, p, dot, vs)
	if err != nil {
		return nil, err
	}
	for _, v := range p.Decl {
		if p.IsAssign {
			// Assigned in a branch, it may or may not hold typ after it.
			vs[v.Ident[0]] = nil
		} else {
			vs[v.Ident[0]] = typ
		}
	}
	return typ, nil
}

// pipeValue checks p's commands and returns the type of its value.
func (c *fieldCheck) pipeValue(t *template.Template, p *parse.PipeNode, dot reflect.Type, vs vars) (reflect.Type, error) {
	var typ reflect.Type
	for _, cmd := range p.Cmds {
		typ = nil
		for _, a := range cmd.Args {
			at, err := c.arg(t, a, dot, vs)
			if err != nil {
				return nil, err
			}
			if len(cmd.Args) == 1 {
				typ = at
			}
		}
	}
	if len(p.Cmds) != 1 {
		return nil, nil // a function's result: not known
	}
	return typ, nil
}

func (c *fieldCheck) arg(t *template.Template, a parse.Node, dot reflect.Type, vs vars) (reflect.Type, error) {
	switch a := a.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return c.fields(t, a, dot, a.Ident)
	case *parse.VariableNode:
		return c.fields(t, a, vs[a.Ident[0]], a.Ident[1:])
	case *parse.PipeNode:
		return c.pipeValue(t, a, dot, maps.Clone(vs))
	case *parse.ChainNode:
		typ, err := c.arg(t, a.Node, dot, vs)
		if err != nil {
			return nil, err
		}
		return c.fields(t, a, typ, a.Field)
	}
	return nil, nil
}

// fields follows names from typ as text/template does (a method first,
// then a struct field or a map key), and says as it does where one
// cannot be evaluated.
func (c *fieldCheck) fields(t *template.Template, n parse.Node, typ reflect.Type, names []string) (reflect.Type, error) {
	for _, name := range names {
		if typ == nil {
			return nil, nil
		}
		ptr := typ
		if typ.Kind() != reflect.Pointer && typ.Kind() != reflect.Interface {
			ptr = reflect.PointerTo(typ)
		}
		if m, ok := ptr.MethodByName(name); ok {
			typ = nil
			if m.Type.NumOut() > 0 {
				typ = m.Type.Out(0)
			}
			continue
		}
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Interface:
			return nil, nil
		case reflect.Map:
			if typ.Key().Kind() == reflect.String {
				typ = typ.Elem()
				continue
			}
			return nil, nil
		case reflect.Struct:
			if f, ok := typ.FieldByName(name); ok && f.IsExported() {
				typ = f.Type
				continue
			}
		}
		loc, context := t.ErrorContext(n)
		return nil, fmt.Errorf("template: %s: executing %q at <%s>: can't evaluate field %s in type %s", loc, t.Name(), context, name, typ)
	}
	return typ, nil
}

// rangeTypes are the key (index) and element types of ranging over typ.
func rangeTypes(typ reflect.Type) (key, elem reflect.Type) {
	for typ != nil && typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == nil {
		return nil, nil
	}
	switch typ.Kind() {
	case reflect.Slice, reflect.Array:
		return reflect.TypeOf(0), typ.Elem()
	case reflect.Map:
		return typ.Key(), typ.Elem()
	case reflect.Chan:
		return typ.Elem(), typ.Elem()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return typ, typ
	}
	return nil, nil
}
