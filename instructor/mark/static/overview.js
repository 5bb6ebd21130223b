// course mark's first page: the Export button.
"use strict";
document.getElementById("export").addEventListener("click", async () => {
  const out = document.getElementById("exported");
  out.textContent = "exporting...";
  const r = await fetch("/api/export", {method: "POST", headers: {"X-Mark": "1"}});
  const data = await r.json();
  out.textContent = data.lines ? data.lines.join("\n") : data.error;
});
