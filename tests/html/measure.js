<script>
(function () {
	var texts = Array.prototype.slice.call(document.querySelectorAll("svg text"));
	var box = texts.map(function (e) { return e.getBoundingClientRect(); });
	var over = [], missing = [], svg = document.querySelector("svg").getBoundingClientRect();
	for (var i = 0; i < box.length; i++)
		for (var j = i + 1; j < box.length; j++) {
			var a = box[i], b = box[j];
			if (a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
			    a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
				over.push(texts[i].textContent + " / " + texts[j].textContent);
		}
	var rows = Array.prototype.slice.call(document.querySelectorAll("table tr")).slice(1);
	var lettered = 0;
	rows.forEach(function (tr) {
		var l = tr.cells[0].textContent;
		if (l === "-")
			return;
		lettered++;
		var c = document.querySelector("g.k[data-k='" + l + "'] circle");
		var r = c && c.getBoundingClientRect();
		if (!r || r.width <= 0 || r.left < svg.left || r.right > svg.right ||
		    r.top < svg.top || r.bottom > svg.bottom)
			missing.push(l);
	});
	var pre = document.createElement("pre");
	pre.id = "layout";
	pre.textContent = "LAYOUT " + JSON.stringify({texts: texts.length, lettered: lettered,
	                                              overlaps: over, missing: missing});
	document.body.appendChild(pre);
})();
</script>
