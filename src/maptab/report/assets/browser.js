"use strict";
// maptab report browser. Sample data comes from the JSON block #report-data and reaches the
// page only through textContent and element attributes set from our own image paths.
(function () {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var samples = data.samples;
  var PAGE = 100;
  // the outcome filter value matching every outcome but "correct" (errors first)
  var NOT_CORRECT = "not correct";
  var FILTERS = [
    ["run", "Run"], ["category", "Category"], ["mdiff", "Map difficulty"],
    ["qdiff", "Query difficulty"], ["outcome", "Outcome"], ["error", "Error type"]
  ];
  var form = document.getElementById("filters");
  var list = document.getElementById("list");
  var count = document.getElementById("count");
  var more = document.getElementById("more");
  var showAll = document.getElementById("showall");
  var hint = document.getElementById("filter-hint");
  var shown = PAGE;
  var expand = false;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function valueOf(s, key) {
    var v = s[key];
    return v === undefined || v === null || v === "" ? "(none)" : String(v);
  }

  var selects = {};
  FILTERS.forEach(function (f) {
    var seen = [];
    samples.forEach(function (s) {
      var v = valueOf(s, f[0]);
      if (seen.indexOf(v) < 0) seen.push(v);
    });
    var label = el("label", null, f[1]);
    var select = el("select");
    select.id = "f-" + f[0];
    select.appendChild(el("option", null, "all")).value = "";
    if (f[0] === "outcome" && seen.some(function (v) { return v !== "correct"; })) {
      select.appendChild(el("option", null, NOT_CORRECT)).value = NOT_CORRECT;
    }
    seen.forEach(function (v) { select.appendChild(el("option", null, v)).value = v; });
    select.addEventListener("change", function () { shown = PAGE; update(); });
    label.appendChild(select);
    form.appendChild(label);
    selects[f[0]] = select;
  });
  var search = el("input");
  search.type = "search";
  search.id = "f-text";
  search.placeholder = "sample id or map";
  var searchLabel = el("label", null, "Search");
  searchLabel.appendChild(search);
  form.appendChild(searchLabel);
  search.addEventListener("input", function () { shown = PAGE; update(); });
  // Enter in the search box must not submit (reload) the page; the CSP forbids inline handlers
  form.addEventListener("submit", function (e) { e.preventDefault(); });

  function decode(text) {
    try {
      return decodeURIComponent(text);
    } catch (e) { // a malformed escape such as "%zz" in a hand-edited address
      return text;
    }
  }

  function choose(key, val) {
    var select = selects[key];
    if (!select) return;
    if (val === "all") val = "";
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === val) select.selectedIndex = i;
    }
  }

  // the report's defaults (the samples not answered correctly, when there are any), then
  // presets from the address: #outcome=wrong&category=Map-only&expand=1 (#outcome=all: all)
  var defaults = data.filters || {};
  Object.keys(defaults).forEach(function (key) { choose(key, String(defaults[key])); });
  location.hash.replace(/^#/, "").split("&").forEach(function (part) {
    if (!part) return;
    var kv = part.split("=");
    var key = decode(kv[0]);
    var val = decode((kv[1] || "").replace(/\+/g, " "));
    if (key === "expand") { expand = val === "1"; return; }
    if (key === "q") { search.value = val; return; }
    choose(key, val);
  });

  function section(parent, title, text, wide) {
    var box = el("div", wide ? "wide" : null);
    box.appendChild(el("h4", null, title));
    box.appendChild(el("pre", null, text === "" ? "–" : text));
    parent.appendChild(box);
  }

  function card(s) {
    var d = el("details", "sample");
    d.dataset.id = s.id;
    if (expand) d.open = true;
    var sum = el("summary");
    sum.appendChild(el("span", "badge o-" + s.outcome.replace(/ /g, "-"), s.outcome));
    sum.appendChild(el("span", "sid", s.id));
    var meta = [s.run, s.category, s.map];
    if (s.mdiff || s.qdiff) meta.push("map " + valueOf(s, "mdiff") + " / query " + valueOf(s, "qdiff"));
    sum.appendChild(el("span", "meta", meta.filter(Boolean).join(" · ")));
    if (s.error) sum.appendChild(el("span", "etype", s.error));
    d.appendChild(sum);
    var body = el("div", "body");
    section(body, "Prompt" + (s.inputs ? " (inputs: " + s.inputs + ")" : ""), s.prompt, true);
    section(body, "Raw answer", s.response, true);
    section(body, "Gold", s.gold);
    section(body, "Predicted (parsed)", s.pred);
    if (s.metrics && s.metrics.length) {
      var box = el("div", "wide");
      box.appendChild(el("h4", null, "Metrics"));
      var table = el("table", "metrics");
      s.metrics.forEach(function (m) {
        var tr = el("tr");
        tr.appendChild(el("td", null, m[0]));
        tr.appendChild(el("td", null, m[1]));
        table.appendChild(tr);
      });
      box.appendChild(table);
      body.appendChild(box);
    }
    // a conversation page this report wrote (tool-use runs): our own relative path only
    if (typeof s.transcript === "string" && /^transcripts\/[0-9]+-[0-9a-f]+\.html$/.test(s.transcript)) {
      var conv = el("p", "wide conversation");
      var link = el("a", null, "Conversation: each turn, tool call and result");
      link.href = s.transcript;
      conv.appendChild(link);
      body.appendChild(conv);
    }
    var img = s.img || {};
    if (img.gold || img.pred || img.map) {
      var maps = el("div", "maps wide");
      [["gold", "Gold route"], ["pred", "Predicted route"], ["map", "Map"]].forEach(function (k) {
        if (!img[k[0]]) return;
        var fig = el("figure");
        var pic = el("img");
        pic.loading = "lazy";
        pic.alt = k[1];
        pic.src = img[k[0]];
        fig.appendChild(pic);
        fig.appendChild(el("figcaption", null, k[1]));
        maps.appendChild(fig);
      });
      body.appendChild(maps);
    }
    d.appendChild(body);
    return d;
  }

  function matches(s) {
    for (var i = 0; i < FILTERS.length; i++) {
      var key = FILTERS[i][0];
      var want = selects[key].value;
      if (key === "outcome" && want === NOT_CORRECT) {
        if (valueOf(s, key) === "correct") return false;
      } else if (want && valueOf(s, key) !== want) {
        return false;
      }
    }
    var q = search.value.trim().toLowerCase();
    if (q && (s.id + " " + (s.map || "")).toLowerCase().indexOf(q) < 0) return false;
    return true;
  }

  function update() {
    var hits = samples.filter(matches);
    list.textContent = "";
    var frag = document.createDocumentFragment();
    hits.slice(0, shown).forEach(function (s) { frag.appendChild(card(s)); });
    list.appendChild(frag);
    count.textContent = hits.length + " of " + samples.length + " samples" +
      (hits.length > shown ? " (first " + shown + " shown)" : "");
    count.dataset.matches = String(hits.length);
    more.hidden = hits.length <= shown;
    hint.textContent = selects.outcome.value === NOT_CORRECT
      ? "listing the samples not answered correctly (wrong, format and API errors)" : "";
    showAll.hidden = hits.length === samples.length;
    showAll.textContent = "Show all " + samples.length + " samples";
  }

  more.addEventListener("click", function () { shown += PAGE; update(); });
  showAll.addEventListener("click", function () {
    FILTERS.forEach(function (f) { selects[f[0]].value = ""; });
    search.value = "";
    shown = PAGE;
    update();
  });
  update();
})();
