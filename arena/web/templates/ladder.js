(function(){var s=+document.body.getAttribute('data-refresh');
if(s>0)setTimeout(function(){if(!document.hidden)location.reload();else document.addEventListener('visibilitychange',function(){location.reload();},{once:true});},s*1000);})();
(function(){function mark(){document.querySelectorAll('.wide').forEach(function(w){if(w.scrollWidth>w.clientWidth+1)w.setAttribute('data-scrolls','');else w.removeAttribute('data-scrolls');});}
mark();window.addEventListener('resize',mark);})();
