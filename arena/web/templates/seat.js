(function(){
var table=document.getElementById('table'),note=document.getElementById('note');
function version(){return table.getAttribute('data-version');}
function fit(){
var boxes=table.querySelectorAll('.wide');
for(var i=0;i<boxes.length;i++){var hint=boxes[i].parentNode.querySelector('.scroll-hint');
if(hint)hint.hidden=boxes[i].scrollWidth<=boxes[i].clientWidth+1;}
}
function show(html){
var holder=document.createElement('div');holder.innerHTML=html;var next=holder.firstElementChild;
if(!next||next.id!=='table'||+next.getAttribute('data-version')<+version())return;
var active=document.activeElement,typed=active&&active.tagName==='INPUT'?active.id:'',value=typed?active.value:'';
var asked=table.getAttribute('data-asked')!==next.getAttribute('data-asked')||next.querySelector('#refusal');
var inside=active&&table.contains(active),card=active&&active.getAttribute?active.getAttribute('data-card'):null;
table.replaceWith(next);table=next;fit();
var again=typed&&document.getElementById(typed);
if(again){again.value=next.querySelector('#refusal')?value:'';again.focus({preventScroll:true});return;}
if(!inside&&!asked)return;
var same=card&&table.querySelector('[data-card="'+card+'"]');
var target=same||table.querySelector('button.card.legal,.calls button,#next')||table.querySelector('#asked');
if(target){if(!target.hasAttribute('tabindex')&&target.tagName==='H2')target.setAttribute('tabindex','-1');target.focus({preventScroll:true});}
}
function poll(){
fetch('table?since='+version(),{cache:'no-store'}).then(function(r){if(!r.ok)throw new Error(r.status);return r.text();})
.then(function(t){note.textContent='';show(t);setTimeout(poll,50);})
.catch(function(){note.textContent='The game cannot be reached (it has ended, or stopped): the last table received is shown.';setTimeout(poll,2000);});
}
document.addEventListener('submit',function(e){
var form=e.target;e.preventDefault();
var data=new URLSearchParams(new FormData(form));
if(e.submitter&&e.submitter.name)data.set(e.submitter.name,e.submitter.value);
fetch(form.getAttribute('action'),{method:'POST',body:data,headers:{'X-Seat-Script':'1'},cache:'no-store'})
.then(function(r){return r.text().then(function(t){if(r.ok){note.textContent='';show(t);}else{note.textContent=t;}});})
.catch(function(){note.textContent='The game cannot be reached: your answer was not sent. Try again.';});
});
window.addEventListener('resize',fit);
fit();poll();
})();
