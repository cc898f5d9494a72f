#define _GNU_SOURCE
#include <sys/socket.h>
#include <time.h>
int main(){int sv[2];socketpair(AF_UNIX,SOCK_STREAM,0,sv);struct timespec due;clock_gettime(CLOCK_MONOTONIC,&due);char b[3]={0};char r[64];for(int i=0;;i++){due.tv_nsec+=10000000;if(due.tv_nsec>=1000000000)due.tv_nsec-=1000000000,due.tv_sec++;clock_nanosleep(CLOCK_MONOTONIC,TIMER_ABSTIME,&due,0);send(sv[0],b,3,MSG_DONTWAIT);if(i%100==0)while(recv(sv[1],r,64,MSG_DONTWAIT)>0);}}
