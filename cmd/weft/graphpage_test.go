package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
)

// browser returns a chromedp context on a headless Chromium, skipping
// the test where none is installed (failing under CI=true: .ci/run
// installs one).
func browser(t *testing.T) context.Context {
	t.Helper()
	var found string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			found = p
			break
		}
	}
	if found == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found (CI=true; .ci/run installs it)")
		}
		t.Skip("no Chromium found (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(found), chromedp.NoSandbox, chromedp.WindowSize(1400, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	return ctx
}

// TestGraphPage loads weft graph's page for stories260K in headless
// Chromium, opens a layer, searches, toggles fusion and reads the totals.
func TestGraphPage(t *testing.T) {
	shared := testdata.Shared(t)
	m := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.json")
	if code, _, errOut := weft("bench", "-m", m, "-t", "1", "-p", "0", "-n", "4", "-r", "1", "--profile-out", prof); code != 0 {
		t.Fatalf("bench --profile-out: %s", errOut)
	}
	page := filepath.Join(dir, "graph.html")
	if code, _, errOut := weft("graph", "-m", m, "--format", "html", "--profile", prof, "-o", page); code != 0 {
		t.Fatalf("graph --format html: %s", errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(html), `"http://www.w3.org/2000/svg"`, "") // a name, not a fetch
	for _, net := range []string{"http://", "https://", "<link", "<script src", "<img", "@import", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(text, net) {
			t.Errorf("the page is not self-contained: it holds %q", net)
		}
	}
	// The reference totals, from the checkpoint itself.
	ck, err := gguf.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	var params, weightBytes int64
	for _, ti := range ck.Tensors {
		n := int64(1)
		for _, d := range ti.Shape {
			n *= int64(d)
		}
		params += n
		weightBytes += int64(ti.Size)
	}
	ck.Close()

	ctx := browser(t)
	count := func(sel string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	eval := func(js string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	// do runs JavaScript for its effect (a click, a change).
	do := func(js string) { eval("(()=>{" + js + `;return ""})()`) }
	click := func(sel string) {
		do(fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new MouseEvent("click",{bubbles:true}))`, sel))
	}
	raw := func(id string) int64 {
		v, err := strconv.ParseFloat(eval(fmt.Sprintf(`document.querySelector("#%s td.n").dataset.raw`, id)), 64)
		if err != nil {
			t.Fatal(err)
		}
		return int64(v)
	}
	labels := func() string {
		return eval(`[...document.querySelectorAll("g.unit text:first-of-type")].map(t=>t.textContent).join("|")`)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("g.unit"))); err != nil {
		t.Fatal(err)
	}
	// Closed: 2 inputs, the embedding, 5 layers, gather, norm, logits.
	if got := count("g.unit.layer"); got != 5 {
		t.Errorf("%d closed layers drawn, want 5", got)
	}
	if got := count("path.edge"); got < 10 {
		t.Errorf("%d edges drawn", got)
	}
	if got, want := raw("t-params"), params; got != want {
		t.Errorf("page: %d parameters, the checkpoint has %d", got, want)
	}
	if got, want := raw("t-bytes"), weightBytes; got != want {
		t.Errorf("page: %d weight bytes, the checkpoint has %d", got, want)
	}
	// FLOPs per token at position 128: 2 per weight element of every matrix
	// but the embedding table (a lookup), plus elementwise work and
	// attention, which the spec's sizes bound: 4·hidden·P per layer for
	// scores and sum, 5·heads·P for the softmax.
	const hidden, heads, layers, vocab, pos = 64, 8, 5, 512, 128
	matmul := 2 * (params - vocab*hidden - int64(layers+1)*hidden) // minus the embedding and the norm vectors
	attn := int64(layers * (4*hidden + 5*heads) * pos)
	if got := raw("t-flops"); got < matmul+attn || got > (matmul+attn)*105/100 {
		t.Errorf("page: %d FLOPs per token, want ≥ %d (matrices %d + attention %d) and within 5%%", got, matmul+attn, matmul, attn)
	}

	// Open layer 2: its ops appear, named as the spec names them.
	click(`g.unit[data-key="L2"]`)
	if got := count("g.unit.layer"); got != 4 {
		t.Errorf("after opening layer 2: %d closed layers, want 4", got)
	}
	if got := count("g.frame"); got != 1 {
		t.Errorf("after opening layer 2: %d layer frames, want 1", got)
	}
	for _, want := range []string{"|a|", "|q, k, v|", "gated_ffn(w_gate, w_up)"} {
		if l := labels(); !strings.Contains(l, want) {
			t.Errorf("open layer: no box %q among %s", want, l)
		}
	}
	// The edges drawn are the dataflow: from each value's producer (a box,
	// a closed layer or a graph input) to each box consuming it, weights
	// aside; the JSON export of the same model says which.
	code, js, errOut := weft("graph", "-m", m, "--format", "json")
	if code != 0 {
		t.Fatalf("graph --format json: %s", errOut)
	}
	var jg graph.JSONGraph
	if err := json.Unmarshal([]byte(js), &jg); err != nil {
		t.Fatal(err)
	}
	unit := map[int]string{} // value id → the key of the box that makes it
	kind := map[int]string{}
	for _, v := range jg.Values {
		kind[v.ID] = v.Kind
		if v.Kind == "input" {
			unit[v.ID] = fmt.Sprintf("i%d", v.ID)
		}
	}
	nodeUnit := func(n graph.JSONNode) string {
		if n.Layer >= 0 && n.Layer != 2 {
			return fmt.Sprintf("L%d", n.Layer)
		}
		return fmt.Sprintf("n%d", n.ID)
	}
	for _, n := range jg.Nodes {
		for _, o := range n.Outputs {
			unit[o] = nodeUnit(n)
		}
	}
	want := map[string]bool{}
	for _, n := range jg.Nodes {
		for _, in := range n.Inputs {
			if in == nil || kind[*in] == "param" {
				continue
			}
			if from, to := unit[*in], nodeUnit(n); from != to {
				want[from+">"+to] = true
			}
		}
	}
	var wantEdges []string
	for e := range want {
		wantEdges = append(wantEdges, e)
	}
	sort.Strings(wantEdges)
	drawn := eval(`[...document.querySelectorAll("path.edge")].map(p=>p.dataset.from+">"+p.dataset.to).sort().join(",")`)
	if drawn != strings.Join(wantEdges, ",") {
		t.Errorf("edges drawn:\n%s\nwant (from the JSON export):\n%s", drawn, strings.Join(wantEdges, ","))
	}
	if !strings.Contains(","+drawn, ",L1>n") {
		t.Error("no edge from closed layer 1 into layer 2")
	}
	// A layered drawing, not a column: the boxes of the open layer do not
	// all share one x, and every edge runs downward.
	xs := eval(`[...new Set([...document.querySelectorAll('g.unit.node[data-layer="2"]')].map(g=>g.transform.baseVal[0].matrix.e))].length+""`)
	if n, _ := strconv.Atoi(xs); n < 2 {
		t.Errorf("the boxes of layer 2 sit at %s distinct x", xs)
	}
	if up := eval(`(()=>{const y=k=>document.querySelector('g.unit[data-key="'+k+'"]').transform.baseVal[0].matrix.f;
		return [...document.querySelectorAll("path.edge")].filter(p=>y(p.dataset.from)>=y(p.dataset.to)).length+""})()`); up != "0" {
		t.Errorf("%s edges run upward or sideways", up)
	}
	// Select the attention projections: the weights' tensors, types and bytes.
	do(`[...document.querySelectorAll("g.unit.node")].find(g=>g.textContent.startsWith("q, k, v")).dispatchEvent(new MouseEvent("click",{bubbles:true}))`)
	detail := eval(`document.getElementById("detail").textContent`)
	for _, want := range []string{"blk.2.attn_q.weight f32 [64 64] 16.0 KiB", "blk.2.attn_k.weight f32 [32 64] 8.00 KiB", "llama.yaml:", "fused: linear + linear + linear", "outq f32 [T 64]", "outv f32 [T 32]"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail of linear_multi lacks %q: %s", want, detail)
		}
	}
	if spec := eval(`document.querySelector("#spec .hl").textContent`); !strings.Contains(spec, "linear(h, wq)") {
		t.Errorf("the spec line shown is %q, want the q projection's", spec)
	}
	checkPageDetails(t, ctx, m, eval, do, count, layers)

	// Search a tensor: every layer's down projection, layers opened.
	do(`const q=document.getElementById("q");q.value="ffn_down";q.dispatchEvent(new KeyboardEvent("keydown",{key:"Enter"}))`)
	if got := count("g.unit.hit"); got != layers {
		t.Errorf("search ffn_down: %d boxes highlighted, want %d", got, layers)
	}
	if got := count("g.unit.layer"); got != 0 {
		t.Errorf("search ffn_down: %d layers left closed, want 0", got)
	}
	// Colour by measured time: boxes of the profile's nodes are tinted.
	do(`const c=document.getElementById("color");c.value="time";c.dispatchEvent(new Event("change"))`)
	if tinted := eval(`String([...document.querySelectorAll("g.unit.node rect")].filter(r=>r.getAttribute("fill").startsWith("rgb")).length)`); tinted == "0" {
		t.Error("colour by time: no box tinted")
	}
	// Before fusion: more ops, the spec's own q, k and v.
	fused := raw("t-ops")
	do(`document.getElementById("unfused").click()`)
	if got := raw("t-ops"); got <= fused {
		t.Errorf("before fusion: %d ops, after: %d", got, fused)
	}
	do(`document.getElementById("expand").click()`)
	for _, want := range []string{"|q|", "|k|", "|linear(wv)|"} {
		if l := labels(); !strings.Contains(l, want) {
			t.Errorf("before fusion: no box %q", want)
		}
	}
	// A placement over two devices: colour by device tells them apart.
	placed := filepath.Join(dir, "placed.html")
	if code, _, errOut := weft("graph", "-m", m, "--devices", "cpu:0;cpu:1", "--format", "html", "-o", placed); code != 0 {
		t.Fatalf("graph --devices: %s", errOut)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+placed), chromedp.WaitVisible(chromedp.CSS("g.unit"))); err != nil {
		t.Fatal(err)
	}
	do(`document.getElementById("expand").click();const c=document.getElementById("color");c.value="device";c.dispatchEvent(new Event("change"))`)
	devs := eval(`[...new Set([...document.querySelectorAll("g.unit.node")].map(g=>(g.textContent.match(/@(cpu:\d)/)||[])[1]).filter(Boolean))].sort().join(",")`)
	fills := count(`g.unit.node rect[fill="` + eval(`document.querySelector("g.unit.node[data-node] rect").getAttribute("fill")`) + `"]`)
	if devs != "cpu:0,cpu:1" || fills == count("g.unit.node rect") {
		t.Errorf("--devices cpu:0;cpu:1: boxes on %q, %d of %d in the first box's colour", devs, fills, count("g.unit.node rect"))
	}
	if dir := os.Getenv("WEFT_SCREENSHOTS"); dir != "" {
		// The screenshots show the fused, profiled page.
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("g.unit"))); err != nil {
			t.Fatal(err)
		}
		screenshots(t, ctx, dir)
	}
}

// checkPageDetails checks, on the page with layer 2 open, the edges'
// labels (the spec's value names and shapes, no made-up names), the
// hyperparameters panel against the model's, each selected op's FLOPs and
// memory against graph.NodeCost, and that layer 2 closes again.
func checkPageDetails(t *testing.T, ctx context.Context, path string, eval func(string) string, do func(string), count func(string) int, layers int) {
	t.Helper()
	m, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	key := func(label string) string {
		return eval(fmt.Sprintf(`(([...document.querySelectorAll('g.unit.node[data-layer="2"]')].find(g=>g.querySelector("text").textContent===%q))||{dataset:{}}).dataset.key||""`, label))
	}
	qkv, a := key("q, k, v"), key("a")
	if qkv == "" || a == "" {
		t.Fatalf("layer 2 has no box q, k, v (%q) or a (%q)", qkv, a)
	}
	// Edges: the projection gives attention q, k and v, named and shaped.
	edge := eval(fmt.Sprintf(`(document.querySelector('text.elabel[data-from=%q][data-to=%q]')||{}).textContent||""`, qkv, a))
	if want := "q [T 64], k [T 32], v [T 32]"; edge != want {
		t.Errorf("the edge from q, k, v into a is labelled %q, want %q", edge, want)
	}
	into := eval(fmt.Sprintf(`[...document.querySelectorAll('text.elabel[data-to=%q]')].map(t=>t.textContent).join("|")`, qkv))
	if !strings.Contains(into, "h [T 64]") {
		t.Errorf("the edges into q, k, v are labelled %q, want h [T 64]", into)
	}
	if made := eval(`[...document.querySelectorAll("text.elabel")].map(t=>t.textContent).filter(s=>/\b[a-z][a-z0-9_.]*_[0-9]+\b/.test(s)).join("|")`); made != "" {
		t.Errorf("edges labelled with made-up names: %s", made)
	}
	// Hyperparameters: every one the model resolved, with its value.
	if n := count("#params tr"); n != len(m.Params) {
		t.Errorf("the hyperparameters panel has %d rows, the model %d params", n, len(m.Params))
	}
	for k, v := range m.Params {
		got := eval(fmt.Sprintf(`((document.getElementById(%q)||{cells:[{},{dataset:{}}]}).cells[1].dataset.raw)||"(none)"`, "p-"+k))
		want := fmt.Sprint(v)
		if b, err := json.Marshal(v); err == nil && (strings.HasPrefix(string(b), "[") || strings.HasPrefix(string(b), "{")) {
			want = string(b)
		}
		if f, ok := v.(float64); ok {
			if g, err := strconv.ParseFloat(got, 64); err == nil && g == f {
				continue
			}
		}
		if got != want {
			t.Errorf("hyperparameter %s: page %q, model %q", k, got, want)
		}
	}
	for k, want := range map[string]string{"hidden": "64", "layers": strconv.Itoa(layers), "heads": "8", "kv_heads": "4", "vocab": "512"} {
		if got := eval(fmt.Sprintf(`document.getElementById(%q).cells[1].textContent`, "p-"+k)); got != want {
			t.Errorf("hyperparameter %s shows %q, want %s", k, got, want)
		}
	}
	// Per-op FLOPs and memory: what graph.NodeCost says of the node, at
	// the page's position.
	pos, err := strconv.ParseInt(eval(`document.getElementById("pos").value`), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[int]*graph.Node{}
	for _, n := range m.Graph.Nodes {
		nodes[n.ID] = n
	}
	for _, k := range []string{qkv, a} {
		do(fmt.Sprintf(`document.querySelector('g.unit[data-key=%q]').dispatchEvent(new MouseEvent("click",{bubbles:true}))`, k))
		id, _ := strconv.Atoi(strings.TrimPrefix(k, "n"))
		n := nodes[id]
		if n == nil {
			t.Fatalf("box %s: no node %d in the model's graph", k, id)
		}
		c := graph.NodeCost(n)
		p := pos
		if c.Window > 0 {
			p = min(p, int64(c.Window))
		}
		wantFlops, wantMem := c.FLOPs+c.FLOPsPerPos*p, c.WeightBytes+c.ActBytes+c.KVBytesPerPos*p
		if wantFlops == 0 || wantMem == 0 {
			t.Errorf("%s: NodeCost %+v is empty", n.Op.Name, c)
		}
		gotFlops := eval(`(document.querySelector("#d-flops td:last-child")||{dataset:{}}).dataset.raw||""`)
		gotMem := eval(`(document.querySelector("#d-mem td:last-child")||{dataset:{}}).dataset.raw||""`)
		if gotFlops != strconv.FormatInt(wantFlops, 10) || gotMem != strconv.FormatInt(wantMem, 10) {
			t.Errorf("%s (%s): page FLOPs %s, memory %s; NodeCost at position %d: %d, %d", graph.Label(n), n.Op.Name, gotFlops, gotMem, p, wantFlops, wantMem)
		}
	}
	// Closing layer 2 again by its frame.
	do(`document.querySelector('g.frame[data-layer="2"]').dispatchEvent(new MouseEvent("click",{bubbles:true}))`)
	if got := count("g.unit.layer"); got != layers {
		t.Errorf("after closing layer 2: %d closed layers, want %d", got, layers)
	}
	if got := count("g.frame"); got != 0 {
		t.Errorf("after closing layer 2: %d layer frames, want 0", got)
	}
	if got := count(`g.unit.node[data-layer="2"]`); got != 0 {
		t.Errorf("after closing layer 2: %d of its boxes still drawn", got)
	}
	do(`document.querySelector('g.unit[data-key="L2"]').dispatchEvent(new MouseEvent("click",{bubbles:true}))`)
}

// screenshots writes the pictures of docs/graph-page.md (run with
// WEFT_SCREENSHOTS=docs).
func screenshots(t *testing.T, ctx context.Context, dir string) {
	shots := []struct {
		file string
		js   string
	}{
		{"graph-page-closed.png", `const u=document.getElementById("unfused");u.checked=false;u.dispatchEvent(new Event("change"));
			const c=document.getElementById("color");c.value="op";c.dispatchEvent(new Event("change"));
			const q=document.getElementById("q");q.value="";q.dispatchEvent(new KeyboardEvent("keydown",{key:"Enter"}));
			document.getElementById("collapse").click();document.getElementById("main").scrollTop=0`},
		{"graph-page-layer.png", `document.querySelector('g.unit[data-key="L0"]').dispatchEvent(new MouseEvent("click",{bubbles:true}));
			[...document.querySelectorAll("g.unit.node")].find(g=>g.textContent.startsWith("q, k, v")).dispatchEvent(new MouseEvent("click",{bubbles:true}));
			document.getElementById("main").scrollTop=0`},
		{"graph-page-time.png", `const c=document.getElementById("color");c.value="time";c.dispatchEvent(new Event("change"));document.getElementById("main").scrollTop=0`},
		{"graph-page-unfused.png", `const c=document.getElementById("color");c.value="op";c.dispatchEvent(new Event("change"));
			const u=document.getElementById("unfused");u.checked=true;u.dispatchEvent(new Event("change"));
			document.getElementById("collapse").click();
			document.querySelector('g.unit[data-key="L0"]').dispatchEvent(new MouseEvent("click",{bubbles:true}));
			document.getElementById("main").scrollTop=0`},
	}
	for _, s := range shots {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[string]("(()=>{"+s.js+`;return ""})()`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Sleep(200*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
