(function(){var board=document.getElementById('board'),note=document.getElementById('note');
function tick(){fetch('board',{cache:'no-store'}).then(function(r){if(!r.ok)throw new Error(r.status);
return r.text();}).then(function(t){board.innerHTML=t;note.textContent='';})
.catch(function(){note.textContent='The arena cannot be reached (it has ended, or stopped): the last board received is shown. The final standings are in report.html in the results folder.';})
.finally(function(){setTimeout(tick,{{ poll_ms }});});}
setTimeout(tick,{{ poll_ms }});})();
