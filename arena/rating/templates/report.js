function openTarget(){var id=decodeURIComponent(location.hash.slice(1));
var t=id&&document.getElementById(id);if(!t)return;var d=t.closest('details');
if(d){d.open=true;t.scrollIntoView();}}
window.addEventListener('hashchange',openTarget);openTarget();
