/* The archive's search, in the browser: no server, no framework, nothing fetched. It works from
   file:// too, because the stories come from search-index.js, loaded before this file with
   <script src> (it sets window.DIGEST_SEARCH). Story text and the query are scraped or typed
   data: they reach the page through text nodes only, never as markup. */
(function () {
  "use strict";

  var MAX_RESULTS = 100;
  var MAX_QUERY = 500;
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  var MARKS = /\p{M}+/gu; // combining marks: the accents NFD splits off their letters

  var input = document.getElementById("q");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  var data = window.DIGEST_SEARCH;
  var stories = null; // built on the first search

  // Lower case without diacritics: "São", "SAO" and "sao" are all "sao". Final sigma is sigma.
  function fold(text) {
    return text.toLowerCase().normalize("NFD").replace(MARKS, "").replace(/ς/g, "σ");
  }

  function load() {
    var at = {};
    data.fields.forEach(function (name, i) { at[name] = i; });
    return data.stories.map(function (row, order) {
      var story = {
        title: String(row[at.title]),
        url: String(row[at.url]),
        date: String(row[at.date]),
        category: String(row[at.category]),
        outlets: Number(row[at.outlets]) || 0,
        keywords: String(row[at.keywords] || ""),
        text: String(row[at.text] || ""),
        order: order,
      };
      story.foldedTitle = fold(story.title);
      story.folded = story.foldedTitle + "\n" + fold(story.text) + "\n" + fold(story.keywords);
      return story;
    });
  }

  // Words and "quoted phrases", folded; a story must contain every one of them.
  function terms(query) {
    var out = [];
    query.slice(0, MAX_QUERY).replace(/[“”„«»]/g, '"').split('"').forEach(function (part, i) {
      var words = i % 2 ? [part.split(/\s+/).join(" ")] : part.split(/\s+/);
      words.forEach(function (word) {
        var term = fold(word).trim();
        if (term && out.indexOf(term) < 0) out.push(term);
      });
    });
    return out;
  }

  function search(query) {
    var wanted = terms(query);
    if (!wanted.length) return null;
    stories = stories || load();
    var found = stories.filter(function (s) {
      return wanted.every(function (t) { return s.folded.indexOf(t) >= 0; });
    });
    found.forEach(function (s) {
      s.rank = wanted.filter(function (t) { return s.foldedTitle.indexOf(t) >= 0; }).length;
    });
    // Title hits first, then the newest, then the order of the editions.
    found.sort(function (a, b) {
      return b.rank - a.rank || (a.date < b.date) - (a.date > b.date) || a.order - b.order;
    });
    return { terms: wanted, stories: found };
  }

  // Where the terms occur in `text`, as [start, end) ranges of the original string. The text is
  // folded one character at a time, remembering where each folded character came from.
  function hits(text, wanted) {
    var folded = "", from = [], to = [];
    for (var i = 0; i < text.length; ) {
      var ch = String.fromCodePoint(text.codePointAt(i));
      var f = ch.charCodeAt(0) < 128 ? ch.toLowerCase() : fold(ch);
      var end = i + ch.length;
      if (!f && to.length) to[to.length - 1] = end; // an accent belongs to its letter
      for (var k = 0; k < f.length; k++) { from.push(i); to.push(end); }
      folded += f;
      i = end;
    }
    var ranges = [];
    wanted.forEach(function (t) {
      for (var at = folded.indexOf(t); at >= 0; at = folded.indexOf(t, at + t.length)) {
        ranges.push([from[at], to[at + t.length - 1]]);
      }
    });
    ranges.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var merged = [];
    ranges.forEach(function (r) {
      var last = merged[merged.length - 1];
      if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    });
    return merged;
  }

  // `text` appended to `parent` as text, with <mark> around the hits.
  function marked(parent, text, wanted) {
    var at = 0;
    hits(text, wanted).forEach(function (r) {
      if (r[0] > at) parent.append(text.slice(at, r[0]));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(r[0], r[1]);
      parent.append(mark);
      at = r[1];
    });
    if (at < text.length) parent.append(text.slice(at));
  }

  function element(tag, className) {
    var el = document.createElement(tag);
    if (className) el.className = className;
    return el;
  }

  function longDate(iso) {
    var p = iso.split("-").map(Number);
    return p.length === 3 && MONTHS[p[1] - 1] ? p[2] + " " + MONTHS[p[1] - 1] + " " + p[0] : iso;
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  function result(story, wanted) {
    var item = element("li", "result");
    var heading = element("h2", "story-title");
    var link = element("a");
    link.setAttribute("href", story.url);
    marked(link, story.title, wanted);
    heading.append(link);
    var meta = element("p", "meta");
    var time = element("time");
    time.setAttribute("datetime", story.date);
    time.textContent = longDate(story.date);
    meta.append(time, " · " + story.category + " · " + plural(story.outlets, "outlet", "outlets"));
    item.append(heading, meta);
    if (story.text) {
      var snippet = element("p", "snippet");
      marked(snippet, story.text, wanted);
      item.append(snippet);
    }
    return item;
  }

  function show(query) {
    var found = search(query);
    list.replaceChildren();
    if (!found) {
      status.textContent = "Type a few words to search " +
        plural(data.stories.length, "story", "stories") + " from " +
        plural(data.editions, "edition", "editions") +
        ': every story that has them all is listed. "Quotes" find a phrase.';
      return;
    }
    var n = found.stories.length;
    if (!n) {
      status.textContent = "No stories match “" + query.trim() + "”.";
      return;
    }
    status.textContent = plural(n, "story matches", "stories match") + " “" + query.trim() + "”" +
      (n > MAX_RESULTS ? ", the first " + MAX_RESULTS + " are listed: add a word to narrow it." : ".");
    found.stories.slice(0, MAX_RESULTS).forEach(function (s) {
      list.append(result(s, found.terms));
    });
  }

  if (!data || !Array.isArray(data.stories) || !Array.isArray(data.fields)) {
    status.textContent = "The search index (search-index.js) did not load: search is unavailable.";
    input.disabled = true;
    return;
  }
  var query = new URLSearchParams(location.search).get("q") || "";
  input.value = query;
  show(query);
  // Results follow the typing; submitting the form loads search.html?q=..., a link to share.
  input.addEventListener("input", function () { show(input.value); });
})();
