(function () {
  "use strict";
  // agent-tui session viewer. Reads the JSON in #session-data, clones the <template> of each
  // entry it shows, and sets only text (never markup) from the data. No network, no eval.
  var D = JSON.parse(document.getElementById("session-data").textContent);
  var nodes = D.nodes;
  var N = nodes.length;
  var ID = 0, PARENT = 1, KIND = 2, TEXT = 3, LABEL = 4, TIME = 5, LAST = 6;
  var CHUNK = 150;
  var ROW = 22;
  var KIND_NAMES = {
    user: "User", assistant: "Assistant", toolResult: "Tool result", system: "System",
    bashExecution: "Shell", custom: "Extension message", compaction: "Compaction",
    branch_summary: "Branch summary", custom_message: "Extension message", context_edit: "Edit",
    label: "Label", session_info: "Name", model_change: "Model", thinking_level_change: "Thinking",
    pin: "Pin", usage: "Usage"
  };
  var MARKS = {
    H: "hidden", R: "replaced", S: "restored", C: "summarized", K: "carried", M: "summary", P: "pinned",
    X: "superseded"
  };
  var MARK_HELP = {
    H: "hidden from the model by edit ", R: "replaced in the model's view by edit ",
    S: "restored by edit ", C: "folded into the summary of compaction ",
    K: "system prompt, carried on whole by compaction ", M: "compaction summary the model sees",
    P: "pinned: kept verbatim through compaction", X: "older compaction, superseded"
  };

  var EVENTS = /^(label|session_info|model_change|thinking_level_change|pin|context_edit|usage|custom:.*)$/;
  var byId = Object.create(null);
  var children = new Array(N);
  var i;
  for (i = 0; i < N; i++) {
    byId[nodes[i][ID]] = i;
    var p = nodes[i][PARENT];
    if (p >= 0) (children[p] || (children[p] = [])).push(i);
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function cls(s) { return String(s).replace(/[^A-Za-z0-9_-]/g, "_"); }
  function kindName(k) {
    if (KIND_NAMES[k]) return KIND_NAMES[k];
    if (k.indexOf("custom:") === 0) return "State " + k.slice(7);
    return k;
  }
  function entryHref(idx) { return "#entry=" + encodeURIComponent(nodes[idx][ID]); }
  function pathTo(idx) {
    var path = [];
    while (idx >= 0 && path.length <= N) { path.push(idx); idx = nodes[idx][PARENT]; }
    return path.reverse();
  }

  var S = { leaf: -1, path: [], pos: Object.create(null), marks: {}, start: 0, end: 0, focus: -1 };
  var box = document.getElementById("entries");
  var head = document.getElementById("chat-head");

  // -- the chat: a window of the branch ------------------------------------------------------

  function forkNav(idx) {
    var kids = children[idx];
    if (!kids || kids.length < 2) return null;
    var nav = el("nav", "forks", kids.length + " branches continue here: ");
    kids.forEach(function (kid, n) {
      var b = el("button", "fork" + (S.pos[kid] !== undefined ? " current" : ""), (n + 1) + ". " + nodes[kid][TEXT]);
      b.type = "button";
      b.title = "show the branch through " + nodes[kid][ID];
      b.setAttribute("data-go", String(kid));
      nav.appendChild(b);
    });
    return nav;
  }

  function entryEl(idx) {
    var n = nodes[idx];
    var mark = S.marks[idx];
    var art = el("article", "entry k-" + cls(n[KIND]));
    art.id = "n" + idx;
    if (mark) art.classList.add("m-" + mark[0]);
    if (idx === S.focus) art.classList.add("focus");
    var h = el("div", "entry-head");
    h.appendChild(el("span", "kind", kindName(n[KIND])));
    var a = el("a", "eid", n[ID]);
    a.href = entryHref(idx);
    h.appendChild(a);
    if (n[TIME]) h.appendChild(el("span", "time", n[TIME]));
    if (n[LABEL]) h.appendChild(el("span", "label", n[LABEL]));
    if (mark) {
      var badge = el("span", "badge m-" + mark[0], MARKS[mark[0]]);
      badge.title = MARK_HELP[mark[0]] + (mark[1] >= 0 ? nodes[mark[1]][ID] : "");
      h.appendChild(badge);
      if (mark[1] >= 0 && (mark[0] === "H" || mark[0] === "R" || mark[0] === "S" || mark[0] === "C" || mark[0] === "K")) {
        var ref = el("a", "ref", "by " + nodes[mark[1]][ID]);
        ref.href = entryHref(mark[1]);
        h.appendChild(ref);
      }
    }
    art.appendChild(h);
    var t = document.getElementById("t" + idx);
    if (t) {
      var body = el("div", "entry-body");
      body.appendChild(t.content.cloneNode(true));
      art.appendChild(body);
    }
    var nav = forkNav(idx);
    if (nav) art.appendChild(nav);
    return art;
  }

  function moreButton(which) {
    var count = which === "earlier" ? S.start : S.path.length - S.end;
    var b = el("button", "more more-" + which,
      "show " + Math.min(CHUNK, count) + " " + which + " entries (" + count + " in all)");
    b.type = "button";
    b.setAttribute("data-more", which);
    if (window.IntersectionObserver) observer.observe(b);
    return b;
  }

  function renderWindow() {
    box.textContent = "";
    if (S.start > 0) box.appendChild(moreButton("earlier"));
    var frag = document.createDocumentFragment();
    for (var k = S.start; k < S.end; k++) frag.appendChild(entryEl(S.path[k]));
    box.appendChild(frag);
    if (S.end < S.path.length) box.appendChild(moreButton("later"));
  }

  function more(which) {
    var old = box.querySelector(".more-" + which);
    if (old) { if (observer) observer.unobserve(old); old.remove(); }
    var frag = document.createDocumentFragment();
    var k;
    if (which === "later") {
      var end = Math.min(S.path.length, S.end + CHUNK);
      for (k = S.end; k < end; k++) frag.appendChild(entryEl(S.path[k]));
      S.end = end;
      box.appendChild(frag);
      if (S.end < S.path.length) box.appendChild(moreButton("later"));
    } else {
      var start = Math.max(0, S.start - CHUNK);
      for (k = start; k < S.start; k++) frag.appendChild(entryEl(S.path[k]));
      S.start = start;
      if (S.start > 0) frag.insertBefore(moreButton("earlier"), frag.firstChild);
      box.insertBefore(frag, box.firstChild);
    }
  }

  var observer = window.IntersectionObserver
    ? new IntersectionObserver(function (items) {
        items.forEach(function (item) {
          if (item.isIntersecting) more(item.target.getAttribute("data-more"));
        });
      }, { rootMargin: "400px" })
    : null;

  function renderHead() {
    head.textContent = "";
    var leafNode = nodes[S.leaf];
    var title = S.leaf === D.leaf ? "Active branch" : "Other branch";
    head.appendChild(el("strong", null, title));
    head.appendChild(el("span", null, " ending at "));
    var a = el("a", "eid", leafNode[ID]);
    a.href = entryHref(S.leaf);
    head.appendChild(a);
    if (leafNode[LABEL]) head.appendChild(el("span", "label", leafNode[LABEL]));
    head.appendChild(el("span", "muted", " · " + S.path.length + " entries"));
    if (S.path.length > CHUNK) {
      var first = el("button", "back", "first entry");
      first.type = "button";
      first.setAttribute("data-go", String(S.path[0]));
      head.appendChild(first);
      var latest = el("button", "back", "latest entry");
      latest.type = "button";
      latest.setAttribute("data-go", String(S.leaf));
      head.appendChild(latest);
    }
    if (S.leaf !== D.leaf && D.leaf >= 0) {
      var back = el("button", "back", "back to the active branch");
      back.type = "button";
      back.setAttribute("data-go", String(D.leaf));
      head.appendChild(back);
    }
  }

  function show(leaf, focus) {
    S.leaf = leaf;
    S.path = pathTo(leaf);
    S.pos = Object.create(null);
    for (var k = 0; k < S.path.length; k++) S.pos[S.path[k]] = k;
    var set = D.views[String(leaf)];
    S.marks = set === undefined ? {} : D.markSets[set];
    S.focus = focus === undefined ? -1 : focus;
    var at = S.focus >= 0 && S.pos[S.focus] !== undefined ? S.pos[S.focus] : 0;
    S.start = Math.max(0, at - 20);
    S.end = Math.min(S.path.length, S.start + CHUNK);
    renderHead();
    renderWindow();
    renderBranches();
    tree.refresh();
    if (S.focus >= 0) {
      var target = document.getElementById("n" + S.focus);
      if (target && target.scrollIntoView) target.scrollIntoView({ block: "center" });
    } else {
      window.scrollTo(0, 0);
    }
  }

  function select(idx) {
    if (idx < 0 || idx >= N) return;
    if (S.pos[idx] !== undefined) {
      var k = S.pos[idx];
      if (k < S.start || k >= S.end) { show(S.leaf, idx); return; }
      var old = box.querySelector(".entry.focus");
      if (old) old.classList.remove("focus");
      S.focus = idx;
      var target = document.getElementById("n" + idx);
      if (target) { target.classList.add("focus"); if (target.scrollIntoView) target.scrollIntoView({ block: "center" }); }
      tree.refresh();
      return;
    }
    show(nodes[idx][LAST], idx);
  }

  // -- the sidebar: branches and the tree (a virtual list: only visible rows exist) -----------------

  function renderBranches() {
    var list = document.getElementById("branch-list");
    list.textContent = "";
    var leaves = [];
    for (var k = 0; k < N; k++) if (!children[k]) leaves.push(k);
    leaves.sort(function (a, b) { return a === D.leaf ? -1 : b === D.leaf ? 1 : b - a; });
    leaves.slice(0, 300).forEach(function (leaf) {
      var li = el("li", "branch" + (leaf === S.leaf ? " current" : "") + (leaf === D.leaf ? " active" : ""));
      var shown = leaf;  // name the branch by its last message, not by a label or a setting after it
      while (EVENTS.test(nodes[shown][KIND]) && nodes[shown][PARENT] >= 0) shown = nodes[shown][PARENT];
      var label = nodes[leaf][LABEL] || nodes[shown][LABEL];
      var b = el("button", null, (label ? "[" + label + "] " : "") + nodes[shown][TEXT]);
      b.type = "button";
      b.setAttribute("data-go", String(leaf));
      b.title = nodes[leaf][ID];
      li.appendChild(b);
      list.appendChild(li);
    });
    if (leaves.length > 300) list.appendChild(el("li", "muted", (leaves.length - 300) + " more in the tree"));
  }

  var tree = (function () {
    var rows = [];
    var roots = [];
    for (var k = 0; k < N; k++) if (nodes[k][PARENT] < 0) roots.push(k);
    var stack = [];
    for (k = roots.length - 1; k >= 0; k--) stack.push([roots[k], "", ""]);
    while (stack.length) {
      var item = stack.pop();
      var idx = item[0], lead = item[1], body = item[2];
      rows.push([idx, lead]);
      var kids = children[idx] || [];
      if (kids.length === 1) stack.push([kids[0], body, body]);
      else for (var c = kids.length - 1; c >= 0; c--) {
        var last = c === kids.length - 1;
        stack.push([kids[c], body + (last ? "\u2514\u2500" : "\u251c\u2500"), body + (last ? "  " : "\u2502 ")]);
      }
    }
    var host = document.getElementById("tree");
    var spacer = el("div", "tree-spacer");
    spacer.style.height = rows.length * ROW + "px";
    var layer = el("div", "tree-rows");
    spacer.appendChild(layer);
    host.appendChild(spacer);
    var rowOf = Object.create(null);
    rows.forEach(function (r, n) { rowOf[r[0]] = n; });

    function paint() {
      var height = host.clientHeight || 600;
      var first = Math.max(0, Math.floor(host.scrollTop / ROW) - 20);
      var last = Math.min(rows.length, first + Math.ceil(height / ROW) + 40);
      layer.textContent = "";
      layer.style.top = first * ROW + "px";
      for (var r = first; r < last; r++) {
        var idx = rows[r][0];
        var n = nodes[idx];
        var row = el("div", "row k-" + cls(n[KIND]));
        if (S.pos[idx] !== undefined) row.classList.add("on-path");
        if (idx === S.focus) row.classList.add("focus");
        if (S.marks[idx]) row.classList.add("m-" + S.marks[idx][0]);
        row.setAttribute("data-go", String(idx));
        row.title = n[ID];
        row.appendChild(el("span", "pre", rows[r][1]));
        row.appendChild(el("span", "dot", S.pos[idx] !== undefined ? "\u25cf" : "\u25cb"));
        row.appendChild(el("span", "kind", kindName(n[KIND])));
        if (n[LABEL]) row.appendChild(el("span", "label", n[LABEL]));
        row.appendChild(el("span", "text", n[TEXT]));
        layer.appendChild(row);
      }
    }
    host.addEventListener("scroll", function () { window.requestAnimationFrame(paint); });
    return {
      refresh: function () {
        var target = S.focus >= 0 ? S.focus : S.leaf;
        var r = rowOf[target];
        if (r !== undefined) {
          var top = r * ROW, h = host.clientHeight || 600;
          if (top < host.scrollTop || top > host.scrollTop + h - ROW) host.scrollTop = Math.max(0, top - h / 2);
        }
        paint();
      }
    };
  })();

  // -- events ------------------------------------------------------------------------------------

  document.addEventListener("click", function (ev) {
    var t = ev.target;
    while (t && t !== document && !(t.getAttribute && (t.getAttribute("data-go") || t.getAttribute("data-more")))) t = t.parentNode;
    if (!t || t === document) return;
    var go = t.getAttribute("data-go");
    if (go !== null) { ev.preventDefault(); select(Number(go)); return; }
    var which = t.getAttribute("data-more");
    if (which) { ev.preventDefault(); more(which); }
  });

  function fromHash() {
    var m = /^#entry=(.*)$/.exec(window.location.hash);
    if (!m) return false;
    var id;
    try { id = decodeURIComponent(m[1]); } catch (e) { return false; }
    var idx = byId[id];
    if (idx === undefined) return false;
    select(idx);
    return true;
  }
  window.addEventListener("hashchange", fromHash);

  if (N === 0) {
    head.textContent = "This session has no entries.";
    return;
  }
  show(D.leaf >= 0 ? D.leaf : nodes[0][LAST]);
  fromHash();
  document.body.setAttribute("data-ready", String(Math.round(window.performance ? window.performance.now() : 0)));
})();
