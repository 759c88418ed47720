"""The pages' one stylesheet, inline: screen from a phone's 390 px up, and print.

Tables marked ``stack`` turn into one card per row below 640 px (each cell labelled by its
``data-label``), so no table scrolls sideways on a phone; long code wraps anywhere.
"""

from __future__ import annotations

SCREEN = """
*,*::before,*::after{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1f2328;
background:#f6f8fa}
main{max-width:1100px;margin:0 auto;padding:20px}
header{display:flex;flex-wrap:wrap;gap:4px 12px;align-items:baseline}
header a{color:inherit;text-decoration:none}
a{color:#0550ae}
h1{font-size:22px;margin:8px 0 4px;overflow-wrap:anywhere}
h2{font-size:17px;margin:26px 0 8px}
h3{font-size:15px;margin:14px 0 6px}
p,li,td,th,dd,dt,label,legend{overflow-wrap:anywhere}
.muted{color:#57606a;font-size:13px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:12px;margin:8px 0}
.verdict{background:#fff;border:1px solid #d0d7de;border-left:8px solid #8c959f;
border-radius:8px;padding:12px 16px;margin:12px 0}
.verdict .headline{font-size:19px;font-weight:600;margin:0}
.verdict.fits{border-left-color:#1a7f37} .verdict.borderline{border-left-color:#bf8700}
.verdict.does_not_fit{border-left-color:#cf222e}
.verdict p{margin:6px 0 0}
.tag{display:inline-block;font-size:12px;font-weight:600;border-radius:10px;padding:1px 8px;
color:#fff;background:#57606a;vertical-align:1px}
.tag.fits{background:#1a7f37} .tag.borderline{background:#9a6700}
.tag.does_not_fit{background:#cf222e}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13.5px}
th,td{border:1px solid #d0d7de;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4} .n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code{font-size:12.5px;overflow-wrap:anywhere}
ol.fixes{padding-left:22px} ol.fixes li{margin:8px 0}
.chart svg{display:block;width:100%;height:auto}
.chart .narrow{display:none}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12.5px;margin:6px 0}
.launch pre{background:#0d1117;color:#e6edf3;border-radius:6px;padding:10px 12px;
max-height:420px;overflow-y:auto}
.launch pre code{font-size:inherit}
.launch .bar{display:flex;flex-wrap:wrap;gap:6px 12px;align-items:center}
button{font:inherit;padding:8px 18px;border-radius:6px;border:0;background:#1f6feb;color:#fff;
cursor:pointer}
button.copy{padding:3px 12px;font-size:13px;background:#eef1f4;color:#1f2328;
border:1px solid #d0d7de}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:10px}
fieldset{border:1px solid #d0d7de;border-radius:8px;margin:0 0 12px;padding:8px 12px 12px;
min-width:0}
legend{font-weight:600;font-size:14px;padding:0 4px}
label{display:flex;flex-direction:column;font-size:13px;color:#57606a;min-width:0}
input,select{font:inherit;padding:5px;border:1px solid #d0d7de;border-radius:6px;color:#1f2328;
width:100%;min-width:0;background:#fff}
[aria-invalid=true]{border-color:#cf222e;background:#fff5f5}
.error{color:#a40e26;font-size:13px}
.problems{border-left:6px solid #cf222e;background:#fff;padding:10px 14px;border-radius:8px;
margin:12px 0} .problems h2{margin:0 0 6px}
details summary{cursor:pointer} #ticket details{margin-top:6px}
@media (max-width:640px){
main{padding:12px}
h1{font-size:19px} .verdict .headline{font-size:17px}
.chart .wide{display:none} .chart .narrow{display:block}
table.stack,table.stack tbody,table.stack tr,table.stack td,table.stack th{display:block;
width:100%}
table.stack tr:first-child{display:none}
table.stack tr{border:1px solid #d0d7de;border-radius:6px;margin:0 0 8px;background:#fff}
table.stack td,table.stack th{border:0;border-bottom:1px solid #eef1f4;text-align:left}
table.stack td[data-label]::before{content:attr(data-label);display:block;font-size:11.5px;
color:#57606a}
table.stack td.n{text-align:left}
.opt{display:none}
}
"""

PRINT = """
@media print{
@page{margin:14mm}
body{background:#fff;font-size:11pt}
main{max-width:none;padding:0}
header .muted,button.copy,.no-print,form{display:none!important}
.card,.verdict,table{break-inside:avoid}
tr,li,pre{break-inside:avoid}
h2{break-after:avoid}
.chart .wide{display:block!important} .chart .narrow{display:none!important}
.launch pre{background:#fff;color:#000;border:1px solid #8c959f;max-height:none;overflow:visible}
a{color:#000}
.verdict{border-width:1px 1px 1px 8px}
}
"""

CSS = SCREEN + PRINT
