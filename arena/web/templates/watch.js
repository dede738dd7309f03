(function(){var s=+document.body.getAttribute('data-refresh');
if(s>0)setTimeout(function(){if(!document.hidden)location.reload();else document.addEventListener('visibilitychange',function(){location.reload();},{once:true});},s*1000);})();
