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
	for _, want := range []string{"|a|", "linear_multi(wq, wk, wv)", "gated_ffn(w_gate, w_up)"} {
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
	do(`[...document.querySelectorAll("g.unit.node")].find(g=>g.textContent.startsWith("linear_multi")).dispatchEvent(new MouseEvent("click",{bubbles:true}))`)
	detail := eval(`document.getElementById("detail").textContent`)
	for _, want := range []string{"blk.2.attn_q.weight f32 [64 64] 16.0 KiB", "blk.2.attn_k.weight f32 [32 64] 8.00 KiB", "llama.yaml:", "fused: linear + linear + linear"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail of linear_multi lacks %q: %s", want, detail)
		}
	}
	if spec := eval(`document.querySelector("#spec .hl").textContent`); !strings.Contains(spec, "linear(h, wq)") {
		t.Errorf("the spec line shown is %q, want the q projection's", spec)
	}

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
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("g.unit"))); err != nil {
			t.Fatal(err)
		}
		screenshots(t, ctx, dir)
	}
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
			[...document.querySelectorAll("g.unit.node")].find(g=>g.textContent.startsWith("linear_multi")).dispatchEvent(new MouseEvent("click",{bubbles:true}));
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
