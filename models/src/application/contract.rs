//! Several applications on one NIC contract. The contract's `established` and `wqe_completed`
//! kinds have one handler each, so an application does not set them itself: it claims them
//! with its own handlers ([`claim_contract`], in its plugin's `build`) and makes its connections
//! with [`own_connection`]. Once every application is added, [`install_contract_handlers`] sets
//! the kinds: to the one claim's handlers directly when a single application claimed them (the
//! hot path as if no routing existed), else to a router that passes each event to the handlers
//! of the application that owns its connection.

use crate::nic::{ConnectionSpec, Connections, NicContract, Wqe};
use bevy_ecs::prelude::*;
use engine::prelude::*;

/// A handler of a contract event, as an application writes it.
pub type ContractFn = fn(&mut World, &mut EventQueue, SimEvent);

/// An application's handlers of the NIC's events.
#[derive(Clone, Copy, Debug)]
pub struct ContractHandlers {
    /// `established`: `data` is the connection id.
    pub established: ContractFn,
    /// `wqe_completed`: `data` is the WQE entity.
    pub wqe_completed: ContractFn,
}

/// A claim's number: which application's handlers serve a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContractClaim(pub u16);

/// The claims, and each connection's owner by connection id.
#[derive(Resource, Default, Debug)]
pub struct ContractClaims {
    /// Each claim's handlers, by claim number.
    pub handlers: Vec<ContractHandlers>,
    /// Each connection's claim, by connection id.
    pub owner: Vec<ContractClaim>,
}

/// Claims the contract's application-side events for `handlers`.
pub fn claim_contract(app: &mut App, handlers: ContractHandlers) -> ContractClaim {
    let mut claims = app.world.get_resource_or_insert_with(ContractClaims::default);
    claims.handlers.push(handlers);
    ContractClaim((claims.handlers.len() - 1) as u16)
}

/// Adds `spec` to the run's connections with the next id (returned, and written into the spec),
/// owned by `claim`.
pub fn own_connection(world: &mut World, claim: ContractClaim, mut spec: ConnectionSpec) -> u32 {
    let mut list = world.resource_mut::<Connections>();
    let id = list.list.len() as u32;
    spec.id = id;
    list.list.push(spec);
    let mut claims = world.get_resource_or_insert_with(ContractClaims::default);
    claims.owner.resize(id as usize, claim);
    claims.owner.push(claim);
    id
}

/// Sets the contract's `established` and `wqe_completed` handlers from the claims (call once,
/// after every application's plugin). Nothing claimed: nothing set.
pub fn install_contract_handlers(app: &mut App) {
    let contract = *app.world.resource::<NicContract>();
    let Some(handlers) = app.world.get_resource::<ContractClaims>().map(|c| c.handlers.clone()) else {
        return;
    };
    match handlers[..] {
        [] => {}
        [one] => {
            app.set_handler(contract.established, one.established);
            app.set_handler(contract.wqe_completed, one.wqe_completed);
        }
        _ => {
            app.set_handler(
                contract.established,
                move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
                    let h = handlers_of(w, contract.established.payload(&ev)).established;
                    h(w, q, ev)
                },
            );
            app.set_handler(
                contract.wqe_completed,
                move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
                    let conn = w
                        .get::<Wqe>(contract.wqe_completed.payload(&ev))
                        .expect("a completed WQE is an entity")
                        .connection;
                    let h = handlers_of(w, conn).wqe_completed;
                    h(w, q, ev)
                },
            );
        }
    }
}

fn handlers_of(world: &World, connection: u32) -> ContractHandlers {
    let claims = world.resource::<ContractClaims>();
    let owner = claims.owner[connection as usize];
    claims.handlers[owner.0 as usize]
}
