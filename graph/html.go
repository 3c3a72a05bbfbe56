package graph

import (
	"encoding/json"
	"io"
	"strings"
)

// WriteHTML writes a self-contained interactive page (no network needed):
// the graph's JSON plus a small viewer listing layers, ops, shapes and
// attributes, with search and collapsible layers.
func (g *Graph) WriteHTML(w io.Writer) error {
	data, err := json.Marshal(g.ToJSON())
	if err != nil {
		return err
	}
	page := strings.Replace(htmlPage, "/*GRAPH*/null", strings.ReplaceAll(string(data), "</", "<\\/"), 1)
	_, err = io.WriteString(w, page)
	return err
}

const htmlPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>weft graph</title>
<style>
body{font:13px system-ui,sans-serif;margin:0;display:flex;height:100vh}
#side{width:340px;overflow:auto;border-right:1px solid #ddd;padding:8px}
#main{flex:1;overflow:auto;padding:8px}
.layer{margin:4px 0;border:1px solid #ccc;border-radius:6px}
.layer>summary{cursor:pointer;padding:4px 8px;background:#f4f4f4}
.node{padding:3px 10px;border-top:1px solid #eee;cursor:pointer}
.node:hover{background:#eef5ff}.plugin{background:#fff3d6}
.op{font-weight:600}.dev{color:#06c}.shape{color:#555;font-family:monospace}
#detail pre{white-space:pre-wrap;font-size:12px}
input{width:100%;box-sizing:border-box;padding:4px}
</style></head><body>
<div id="side"><h3 id="title"></h3><input id="q" placeholder="filter ops, names, tensors"><div id="detail"></div></div>
<div id="main"></div>
<script>
const G=/*GRAPH*/null;
const V={};G.values.forEach(v=>V[v.id]=v);
document.getElementById('title').textContent=G.name+' ('+G.nodes.length+' ops)';
function el(tag,cls,text){const e=document.createElement(tag);if(cls)e.className=cls;if(text!==undefined)e.textContent=text;return e}
function sh(id){if(id===null)return '_';const v=V[id];return v.name+'['+(v.shape||[]).join(' ')+']'}
function render(f){
 const main=document.getElementById('main');main.innerHTML='';
 const groups=new Map();
 G.nodes.forEach(n=>{const k=n.layer;if(!groups.has(k))groups.set(k,[]);groups.get(k).push(n)});
 for(const [l,ns] of groups){
  const sel=ns.filter(n=>!f||JSON.stringify(n).includes(f)||n.inputs.some(i=>i!==null&&(V[i].tensor||'').includes(f)));
  if(!sel.length)continue;
  const d=document.createElement('details');d.className='layer';d.open=l<0||!!f;
  d.appendChild(el('summary','',(l<0?'outside layers':'layer '+l)+' — '+sel.length+' ops'));
  sel.forEach(n=>{const e=el('div','node'+(n.plugin?' plugin':''));
   e.appendChild(el('span','op',n.op+(n.plugin?' ['+n.plugin+']':'')));
   e.appendChild(document.createTextNode(' '+n.name+' '));
   if(n.device)e.appendChild(el('span','dev','@'+n.device+' '));
   e.appendChild(el('span','shape',n.outputs.map(sh).join(', ')));
   e.onclick=()=>{const det=document.getElementById('detail');det.replaceChildren(el('pre','',JSON.stringify(Object.assign({},n,{inputs:n.inputs.map(sh),outputs:n.outputs.map(sh),weights:n.inputs.filter(i=>i!==null&&V[i].tensor).map(i=>V[i].tensor)}),null,1)))};
   d.appendChild(e)});
  main.appendChild(d)}
}
document.getElementById('q').oninput=e=>render(e.target.value);render('');
</script></body></html>
`
